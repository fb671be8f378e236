"""EPUB, Jupyter notebooks and WebVTT transcripts: structure kept, malformed input typed."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from extract import extract_document
from extract.errors import CorruptDocumentError, EmptyDocumentError, UnsupportedFormatError
from extract.notebook import MAX_OUTPUT_CHARS
from extract.types import Extraction


def page_bodies(result: Extraction) -> list[str]:
    """Each page's Markdown without its marker line."""
    ends = [*result.page_offsets[1:], len(result.markdown)]
    pages = [
        result.markdown[start:end] for start, end in zip(result.page_offsets, ends, strict=True)
    ]
    return [page.split("\n", 1)[1].strip() for page in pages]


CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""

OPF = """<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0">
  <manifest>
    <item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>
    <item id="img" href="cover.png" media-type="image/png"/>
  </manifest>
  <spine><itemref idref="cover"/><itemref idref="c1"/><itemref idref="img"/><itemref idref="c2"/></spine>
</package>"""


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container">&lol2;</container>"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE c [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container">&secret;</container>"""


def chapter(title: str, body: str) -> str:
    return f"<html><body><h1>{title}</h1>{body}</body></html>"


def epub(files: dict[str, str], *, mimetype: bytes = b"application/epub+zip") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", mimetype)
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


BOOK = {
    "META-INF/container.xml": CONTAINER,
    "OEBPS/content.opf": OPF,
    "OEBPS/cover.xhtml": "<html><body><img src='cover.png'/></body></html>",
    "OEBPS/text/one.xhtml": chapter("The Harbour", "<p>Boats came in at dawn.</p>"),
    "OEBPS/text/two.xhtml": chapter(
        "The Market",
        "<h2>Prices</h2><table><tr><th>Fish</th><th>Price</th></tr><tr><td>cod</td><td>4</td></tr></table>",
    ),
}


def test_an_epub_reads_its_chapters_in_spine_order_with_headings_and_tables() -> None:
    result = extract_document(epub(BOOK), "harbour.epub", None)
    assert result.kind == "epub"
    assert result.page_count == 2, "the cover has no text and the image is not a chapter"
    first, second = page_bodies(result)
    assert first.startswith("# The Harbour")
    assert "Boats came in at dawn." in first
    assert second.startswith("# The Market")
    assert "## Prices" in second
    assert "| cod | 4 |" in second


def test_an_epub_is_known_by_its_bytes_whatever_its_name() -> None:
    assert extract_document(epub(BOOK), "download", "application/octet-stream").kind == "epub"


@pytest.mark.parametrize(
    ("files", "error"),
    [
        ({**BOOK, "OEBPS/content.opf": "<package"}, CorruptDocumentError),
        ({k: v for k, v in BOOK.items() if k != "OEBPS/text/one.xhtml"}, CorruptDocumentError),
        ({**BOOK, "OEBPS/content.opf": OPF.replace("<itemref", "<ignored")}, CorruptDocumentError),
        ({**BOOK, "META-INF/container.xml": BILLION_LAUGHS}, CorruptDocumentError),
        ({**BOOK, "META-INF/container.xml": EXTERNAL_ENTITY}, CorruptDocumentError),
    ],
    ids=["unreadable-package", "missing-chapter", "empty-spine", "xml-bomb", "xxe"],
)
def test_a_damaged_epub_says_so(files: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error):
        extract_document(epub(files), "book.epub", None)


def test_a_zip_that_is_not_an_epub_is_refused() -> None:
    with pytest.raises(UnsupportedFormatError):
        extract_document(epub(BOOK, mimetype=b"application/zip"), "book.epub", None)


NOTEBOOK = {
    "nbformat": 4,
    "metadata": {"language_info": {"name": "python"}},
    "cells": [
        {"cell_type": "markdown", "source": ["# Glacier mass\n", "We fit a *trend*."]},
        {
            "cell_type": "code",
            "source": "print(fit(mass))\n",
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": ["slope -0.42\n"]},
                {"output_type": "execute_result", "data": {"text/plain": "array([1, 2])"}},
                {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}},
                {"output_type": "error", "ename": "ValueError", "evalue": "bad year"},
            ],
        },
        {"cell_type": "code", "source": "x = '```'", "outputs": []},
        {
            "cell_type": "code",
            "source": "spam()",
            "outputs": [{"output_type": "stream", "text": "y" * 5000}],
        },
    ],
}


def test_a_notebook_keeps_markdown_fences_code_and_shows_outputs_text() -> None:
    result = extract_document(json.dumps(NOTEBOOK).encode(), "analysis.ipynb", None)
    assert result.kind == "notebook"
    (body,) = page_bodies(result)
    assert body.startswith("# Glacier mass\nWe fit a *trend*.")
    assert "```python\nprint(fit(mass))\n```" in body
    assert "```text\nslope -0.42\n```" in body
    assert "array([1, 2])" in body
    assert "ValueError: bad year" in body
    assert "iVBORw0KGgo" not in body, "images are not text"
    assert "````python\nx = '```'\n````" in body, "a fence inside the code gets a longer fence"
    assert "y" * MAX_OUTPUT_CHARS + "\n… (output cut)" in body
    assert "y" * (MAX_OUTPUT_CHARS + 1) not in body


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"{not json", CorruptDocumentError),
        (b"[1, 2]", CorruptDocumentError),
        (b'{"nbformat": 4}', CorruptDocumentError),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": ""}]}', EmptyDocumentError),
    ],
    ids=["not-json", "not-an-object", "no-cells", "no-text"],
)
def test_a_malformed_notebook_says_what_is_wrong(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        extract_document(data, "broken.ipynb", None)


TRANSCRIPT = """WEBVTT

NOTE recorded at the harbour meeting

1
00:00:01.000 --> 00:00:03.500
<v Ada Lovelace>The boats came in

2
00:00:03.600 --> 00:00:05.000 align:start
<v Ada Lovelace>at dawn, as always.

00:00:05.200 --> 00:00:07.000
<v.loud Ben>Not on <i>Tuesday</i> &amp; not in fog!

00:00:07.100 --> 00:00:08.000
<v.loud Ben>Not on <i>Tuesday</i> &amp; not in fog!

01:00:09.000 --> 01:00:11.000
<c.yellow>Later</c> that <00:00:09.500>day it cleared
"""


def test_a_transcript_joins_an_utterance_and_keeps_speaker_and_time() -> None:
    result = extract_document(TRANSCRIPT.encode(), "meeting.vtt", None)
    assert result.kind == "webvtt"
    (body,) = page_bodies(result)
    assert body.split("\n\n") == [
        "**[00:00:01] Ada Lovelace:** The boats came in at dawn, as always.",
        "**[00:00:05] Ben:** Not on Tuesday & not in fog!",
        "**[01:00:09]** Later that day it cleared",
    ]


def test_a_transcript_is_known_by_its_header_without_a_name() -> None:
    assert extract_document(TRANSCRIPT.encode(), "captions", None).kind == "webvtt"


@pytest.mark.parametrize(
    "text",
    ["1\n00:00:01.000 --> 00:00:02.000\nhello\n", "WEBVTT\n\nNOTE nothing spoken\n"],
    ids=["no-header", "no-cues"],
)
def test_a_malformed_transcript_says_what_is_wrong(text: str) -> None:
    with pytest.raises(CorruptDocumentError):
        extract_document(text.encode(), "meeting.vtt", None)
