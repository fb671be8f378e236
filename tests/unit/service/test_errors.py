"""Which errors users see: the service's own, and the retrieval core's by their type."""

from __future__ import annotations

from retrieval.errors import QueryTooLong
from service.errors import ComponentError, ProjectNotFound, as_shortlist_error


class LooksLikeOne(Exception):
    """Carries a status and a code, but is nobody's error a user may see."""

    status = 400
    code = "looks_like_one"
    message = "a secret detail"


def test_the_services_errors_pass_as_they_are() -> None:
    error = ProjectNotFound()

    assert as_shortlist_error(error) is error


def test_a_retrieval_error_keeps_its_status_code_and_message() -> None:
    shown = as_shortlist_error(QueryTooLong(5000, 4000))

    assert isinstance(shown, ComponentError)
    assert (shown.status, shown.code) == (422, "query_too_long")
    assert shown.message == "The query is 5000 characters long; the limit is 4000. Shorten it."


def test_an_exception_with_a_status_and_code_of_its_own_is_an_internal_error() -> None:
    assert as_shortlist_error(LooksLikeOne()) is None
    assert as_shortlist_error(KeyError("status")) is None
