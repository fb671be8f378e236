"""What BM25 and the reranker read besides a passage: its document's title and an
informative file name.

A passage rarely repeats what its document is about ("Table 2 shows ..."), so
a question naming the document's subject matches the title page and misses
the page that answers. BM25 therefore reads each passage with its
document's context in front: the first top-level heading (the title) unless
the passage's heading breadcrumb already holds it, and the file name's words
when they are informative (not ``test_4026`` or ``scan``), as minirag-mcp
does with file names. BM25's terms and the text the reranker scores (the local
model's passage vectors, the documents of the Cohere request) are both built by
:func:`in_context`, so the two read the same; the hit's text stays as it was.

Measured on the development set (``bench/data/corpus_dev.jsonl``, BM25
alone, page-level hit@1 / hit@3): none 0.53 / 0.91, file name 0.56 / 0.91,
title 0.56 / 0.91, both 0.60 / 0.93. SciFact BM25 is unchanged (0.698 nDCG@10): an
abstract's title is already its breadcrumb, so its reranker text is unchanged too.
The reranker's rows before and after it read the context are in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

CONTEXT_VERSION = 1
"""Bump when the context given to a passage changes: it is part of cache keys."""

_TITLE_RE = re.compile(r"#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
"""A top-level heading, matched only where a line starts with ``#`` (:func:`document_title`):
sought with ``^`` in the pattern, it was tried at every character of the text."""
_TITLE_CHARS = 20_000
_NAME_WORD_RE = re.compile(r"[^\W_]+")
_NUMBERING_RE = re.compile(r"[A-Za-z]?\d+[A-Za-z]?|v\d+(?:\.\d+)*", re.IGNORECASE)
"""``4026``, ``P19``, ``1164a``, ``v2``: numbering, not words (``Ki67`` stays)."""
_UNINFORMATIVE = frozenset(
    {"test", "sample", "scan", "scanned", "document", "doc", "file", "final", "copy", "draft",
     "new", "untitled", "img", "image", "page", "pages", "pdf", "report"}
)  # fmt: skip


def document_title(markdown: str) -> str:
    """The first top-level heading, without emphasis markers; ``""`` when there is none."""
    head = "\n" + markdown[:_TITLE_CHARS]  # every line, the first too, after a line break
    start = head.find("\n#")
    while start >= 0:
        if match := _TITLE_RE.match(head, start + 1):
            return match.group(1).strip("*_ ")
        start = head.find("\n#", start + 1)
    return ""


def informative_name(name: str) -> str:
    """The file name's words, minus its extension, numbering and words like ``test`` or ``scan``.

    Only the file's own name is read: a document named with the folders it came from
    (``papers/2019/notes.md``) reads as ``notes``, as it did before names held folders."""
    stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", name.rsplit("/", 1)[-1])
    words = [
        word
        for word in _NAME_WORD_RE.findall(stem)
        if not _NUMBERING_RE.fullmatch(word) and word.casefold() not in _UNINFORMATIVE
    ]
    return " ".join(words)


def document_context(name: str, markdown: str) -> tuple[str, str]:
    """``(title, informative file name)``; the name is dropped when the title has its words."""
    title = document_title(markdown)
    named = informative_name(name)
    if _words(named) <= _words(title):
        named = ""
    return title, named


def in_context(context: tuple[str, str], heading: str, passage: str) -> str:
    """What BM25 and the reranker read for a passage: the context its heading breadcrumb
    does not already show, then the passage (breadcrumb and text)."""
    return context_prefix(context, heading) + passage


def context_prefix(context: tuple[str, str], heading: str) -> str:
    """The lines :func:`in_context` puts before a passage under ``heading`` (``""``: none)."""
    return context_prefixes(context, (heading,))[0]


def context_prefixes(context: tuple[str, str], headings: Sequence[str]) -> tuple[str, ...]:
    """:func:`context_prefix` of each of a document's passages by its heading: the context's
    words and each distinct heading's read once, and equal prefixes one string."""
    parts = [(part, _words(part)) for part in context if part]
    by_heading: dict[str, str] = {}
    shared: dict[str, str] = {}
    for heading in headings:
        if heading not in by_heading:
            shown = _words(heading)
            prefix = "".join(f"{part}\n" for part, words in parts if not words <= shown)
            by_heading[heading] = shared.setdefault(prefix, prefix)
    return tuple(by_heading[heading] for heading in headings)


def _words(text: str) -> set[str]:
    return set(map(str.casefold, _NAME_WORD_RE.findall(text)))
