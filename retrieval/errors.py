"""Errors the retrieval core raises, each with a stable ``code`` and an HTTP ``status``.

::

    RetrievalError
    ├── InvalidQuery            (422)
    │   ├── EmptyQuery          empty_query
    │   └── QueryTooLong        query_too_long
    ├── InvalidSearchParameter  (422) invalid_search_parameter
    ├── InvalidLabel            (422) invalid_label
    └── DocumentNotIndexed      (500) document_not_indexed

Each class docstring is its default message. Reranker failures are not errors:
rerankers report them as warnings on the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar


class RetrievalError(Exception):
    """The search could not run."""

    code: ClassVar[str] = "retrieval_error"
    status: ClassVar[int] = 500

    def __init__(self, message: str | None = None) -> None:
        self.message = message or (type(self).__doc__ or "").strip()
        super().__init__(self.message)


class InvalidQuery(RetrievalError):
    """The query cannot be searched."""

    code = "invalid_query"
    status = 422


class EmptyQuery(InvalidQuery):
    """The query is empty: type some words to search for."""

    code = "empty_query"


class QueryTooLong(InvalidQuery):
    """The query is too long: shorten it."""

    code = "query_too_long"

    def __init__(self, length: int, limit: int) -> None:
        self.length = length
        self.limit = limit
        super().__init__(
            f"The query is {length} characters long; the limit is {limit}. Shorten it."
        )


class InvalidSearchParameter(RetrievalError):
    """A search parameter is out of range."""

    code = "invalid_search_parameter"
    status = 422

    def __init__(self, name: str, value: object, rule: str) -> None:
        self.name = name
        super().__init__(f"{name}={value!r} is out of range: {rule}.")


class InvalidLabel(RetrievalError):
    """A line of a labelled-questions file is not a labelled question."""

    code = "invalid_label"
    status = 422

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


class DocumentNotIndexed(RetrievalError):
    """A document was searched before its Markdown was added to the chunk index."""

    code = "document_not_indexed"

    def __init__(self, document_ids: Iterable[str]) -> None:
        self.document_ids = tuple(document_ids)
        names = ", ".join(self.document_ids)
        super().__init__(
            f"Documents not in the chunk index: {names}. "
            "Load their Markdown and pass it to ChunkIndex.add (or search(documents=...)) first."
        )
