"""EPUB: the chapters in spine order, each one a "page" of Markdown, headings kept.

An EPUB is a ZIP of XHTML files; ``META-INF/container.xml`` names the package document (OPF),
whose manifest lists the files and whose spine gives the reading order. E-books have no fixed
pages, so a citation's "page" is the chapter's place in the spine (chapters with no text, such
as a cover image, are skipped). Chapter XHTML goes through the HTML reader, so tables, lists and
headings come out as they do for HTML uploads. The package files are parsed with ``defusedxml``,
which refuses entity declarations and external references (XML bombs, XXE).
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from extract.errors import CorruptDocumentError, DocumentTooLargeError
from extract.html import html_to_markdown
from extract.markdown import assemble_pages
from extract.office import check_zip_members
from extract.text import decode_text
from extract.types import Extraction, ExtractionLimits

EPUB_MIMETYPE = b"application/epub+zip"
_CONTAINER = "META-INF/container.xml"
_NS = {
    "container": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
}
_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})


def is_epub(names: set[str], read: zipfile.ZipFile) -> bool:
    """True for a ZIP that declares itself an EPUB (its ``mimetype`` member)."""
    if "mimetype" not in names or _CONTAINER not in names:
        return False
    with read.open("mimetype") as member:
        return member.read(64).strip() == EPUB_MIMETYPE


def extract_epub(data: bytes, limits: ExtractionLimits) -> Extraction:
    """The book's chapters as pages.

    Raises:
        CorruptDocumentError: for a damaged archive or a package document that cannot be read.
        DocumentTooLargeError: for a zip bomb or more chapters than ``limits.max_pages``.
        EmptyDocumentError: when no chapter has text.
    """
    check_zip_members(data, limits)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            chapters = _spine_files(archive)
            if len(chapters) > limits.max_pages:
                raise DocumentTooLargeError(
                    f"The book has {len(chapters)} chapters, more than the {limits.max_pages} allowed"
                )
            bodies = [_chapter_markdown(archive, name) for name in chapters]
    except (zipfile.BadZipFile, KeyError, ParseError, DefusedXmlException) as exc:
        raise CorruptDocumentError(f"This EPUB is damaged and could not be read: {exc}") from exc
    return assemble_pages([body for body in bodies if body.strip()], "epub")


def _spine_files(archive: zipfile.ZipFile) -> list[str]:
    container = fromstring(archive.read(_CONTAINER))
    rootfile = container.find("container:rootfiles/container:rootfile", _NS)
    if rootfile is None or not rootfile.get("full-path"):
        raise CorruptDocumentError("This EPUB does not say where its package document is.")
    opf_path = str(rootfile.get("full-path"))
    package = fromstring(archive.read(opf_path))
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id"): item
        for item in package.iterfind("opf:manifest/opf:item", _NS)
        if item.get("id") and item.get("href")
    }
    files: list[str] = []
    for itemref in package.iterfind("opf:spine/opf:itemref", _NS):
        item = manifest.get(itemref.get("idref"))
        if item is None or item.get("media-type") not in _CHAPTER_TYPES:
            continue
        href = str(item.get("href")).split("#", 1)[0]
        files.append(posixpath.normpath(posixpath.join(base, href)))
    if not files:
        raise CorruptDocumentError("This EPUB's reading order (its spine) lists no chapters.")
    return files


def _chapter_markdown(archive: zipfile.ZipFile, name: str) -> str:
    text, _encoding = decode_text(archive.read(name))
    return html_to_markdown(text)
