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

CONTEXT_VERSION = 1
"""Bump when the context given to a passage changes: it is part of cache keys."""

_TITLE_RE = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_NAME_WORD_RE = re.compile(r"[^\W_]+")
_NUMBERING_RE = re.compile(r"[A-Za-z]?\d+[A-Za-z]?|v\d+(?:\.\d+)*", re.IGNORECASE)
"""``4026``, ``P19``, ``1164a``, ``v2``: numbering, not words (``Ki67`` stays)."""
_UNINFORMATIVE = frozenset(
    {"test", "sample", "scan", "scanned", "document", "doc", "file", "final", "copy", "draft",
     "new", "untitled", "img", "image", "page", "pages", "pdf", "report"}
)  # fmt: skip


def document_title(markdown: str) -> str:
    """The first top-level heading, without emphasis markers; ``""`` when there is none."""
    match = _TITLE_RE.search(markdown[:20_000])
    return match.group(1).strip("*_ ") if match else ""


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
    shown = _words(heading)
    parts = [part for part in context if part and not _words(part) <= shown]
    return "".join(f"{part}\n" for part in parts)


def _words(text: str) -> set[str]:
    return {word.casefold() for word in _NAME_WORD_RE.findall(text)}
