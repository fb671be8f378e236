"""PDF to page-marked Markdown: pymupdf4llm for layout, plain PyMuPDF as the safety net.

Per page, in order:

1. PyMuPDF reads the plain text blocks. A page with no text layer (a scan), a
   garbage one, a poor OCR layer, or one that is a tiny fraction of a mostly-image
   page is rendered and recognised by OCR (:mod:`extract.ocr`, within its budget;
   the warnings name the recognised pages). A garbage layer that recognition does
   not read is dropped: the page counts as one without text. When no page has text after that, or
   the share of pages still without text is above
   ``limits.max_scanned_fraction`` ("most pages are scans"), the whole document
   is refused with :class:`ScannedPdfError`, saying why recognition did not
   help; otherwise it succeeds with a warning that names those pages.
2. pymupdf4llm renders the page as Markdown (headings, tables, reading order).
   It gets a time budget per document (``limits.layout_budget()``); once it is
   spent, the remaining pages use the plain blocks, so long documents finish
   inside the sandbox timeout. A page where pymupdf4llm fails (for example
   "Cycle in field parents") or keeps less than half of the plain text (it
   skips invisible OCR text layers) also uses the plain blocks. Every fallback
   is reported in ``warnings``. Pages after ``limits.layout_max_pages`` use the
   plain blocks too.
   Pages that need no layout analysis (no image with text over it, no vector graphics
   beyond a few rules, no columns of text, text side by side only as rule-less tables,
   margin notes or list labels: :mod:`extract.simple_page`) skip the model and are
   rendered from the text layer with their headings, lists, code blocks and tables
   (:mod:`extract.text_table`), unless ``limits.layout_every_page``.
3. The layout Markdown is checked against the page's text layer
   (:func:`extract.reconcile.reconcile`): glued or split words are re-spaced as
   the text layer has them, lines it skipped are appended, and a page that still
   loses or invents words beyond the thresholds there is rendered from the plain
   blocks with the layout's headings and tables (:mod:`extract.restructure`;
   reported in ``warnings``).
   Vertical CJK pages (:mod:`extract.vertical`) skip layout analysis and are read
   column by column, right to left.
4. Arabic lam-alef ligatures that MuPDF reads back to front are put in their logical
   order in every rendering of the page (:mod:`extract.lam_alef`).
5. The values of filled form fields that the page does not show (a choice scrolled
   out of its list box) are appended to it, once each (:mod:`extract.form_fields`).

Long PDFs are read in parallel parts (:mod:`extract.pdf_ranges`, driven by
:class:`extract.sandbox.SandboxPool`): :func:`survey_pdf` checks the document as a
whole without layout analysis and lists the pages to recognise; the document is cut
into page ranges, each read by :func:`extract_pdf_part` (recognising its own pages;
those past the document's OCR page budget are named to it as left out), and
:func:`join_pdf_parts` runs the document-level checks and joins them.
:func:`extract_pdf` is the one-part case.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ScannedPdfError,
)
from extract.fidelity import join_hyphenated
from extract.figures import find_figures
from extract.form_fields import page_form_values
from extract.lam_alef import apply_fixes, lam_alef_fixes
from extract.markdown import assemble_pages
from extract.markdown import page_ranges as _page_ranges
from extract.ocr import (
    MIN_TEXT_CHARS,
    OcrEngine,
    OcrReason,
    OcrResult,
    TextLayer,
    describe_pdf_page,
    ocr_deadline,
    ocr_reason,
    recognise_pages,
    render_pdf_page,
)
from extract.ocr import UNUSABLE as _UNUSABLE
from extract.reconcile import reconcile
from extract.restructure import with_layout_structure
from extract.simple_page import needs_layout, simple_markdown
from extract.types import Extraction, ExtractionLimits, Figure, Progress
from extract.vertical import is_vertical, vertical_paragraphs

__all__ = [
    "LAYOUT_KEEP_RATIO",
    "MIN_TEXT_CHARS",
    "PdfPart",
    "PdfSurvey",
    "extract_pdf",
    "extract_pdf_part",
    "join_pdf_parts",
    "open_pdf",
    "survey_pdf",
]

LAYOUT_KEEP_RATIO = 0.5
"""pymupdf4llm output with fewer letters/digits than this share of the plain text is discarded."""

_NO_TEXT: frozenset[OcrReason | None] = frozenset({"no_text", *_UNUSABLE})
"""Pages without text of their own unless recognition reads them."""

_PICTURE_TEXT_MARKERS = re.compile(r"<!-- (Start|End) of picture text -->\n?")


@dataclass
class _PlainPage:
    """What plain PyMuPDF reads from one page."""

    paragraphs: list[str]
    has_images: bool
    error: str | None = None
    blocks: list[Any] = field(default_factory=list)
    """``page.get_text("blocks")``, for :func:`extract.simple_page.needs_layout`."""
    layer: TextLayer | None = None
    vertical: bool = False
    """Vertical CJK writing, read column by column (no layout analysis)."""
    form_values: list[str] = field(default_factory=list)
    """Filled form fields' values the page does not show (:mod:`extract.form_fields`)."""
    fixes: dict[str, str] = field(default_factory=dict)
    """Words whose lam-alef ligatures MuPDF reversed, and their fixed forms
    (:mod:`extract.lam_alef`), for every rendering of the page."""

    @property
    def markdown(self) -> str:
        return "\n\n".join(self.paragraphs)

    @property
    def letters(self) -> int:
        return sum(_count_alnum(paragraph) for paragraph in self.paragraphs)

    def ocr_reason(self, limits: ExtractionLimits) -> OcrReason | None:
        if self.error is not None or self.layer is None:
            return None
        return ocr_reason(self.layer, force=limits.ocr.force)


def _count_alnum(text: str) -> int:
    return sum(1 for char in text if char.isalnum())


def _read_plain(document: Any, index: int) -> _PlainPage:
    try:
        page = document[index]
        blocks = page.get_text("blocks")
        fixes = lam_alef_fixes(page, "\n".join(str(b[4]) for b in blocks if b[6] == 0))
        if fixes:
            blocks = [(*b[:4], apply_fixes(str(b[4]), fixes), *b[5:]) for b in blocks]
        has_images = bool(page.get_images()) or any(block[6] == 1 for block in blocks)
        layer = describe_pdf_page(page, blocks)
        vertical = is_vertical(blocks)
        if vertical:
            paragraphs = vertical_paragraphs(page)
        else:
            paragraphs = [" ".join(join_hyphenated(b[4]).split()) for b in blocks if b[6] == 0]
        form_values = page_form_values(page, layer.text)
    except Exception as exc:
        return _PlainPage([], has_images=False, error=_page_error(exc))
    return _PlainPage(
        [p for p in paragraphs if p],
        has_images=has_images,
        layer=layer,
        vertical=vertical,
        blocks=blocks,
        form_values=form_values,
        fixes=fixes,
    )


def _page_error(exc: Exception) -> str:
    """Why a page could not be read, in words (MuPDF says "exception stack overflow")."""
    reason = str(exc) or type(exc).__name__
    if "stack overflow" in reason or "too many nested" in reason:
        return f"its content is nested more deeply than the PDF reader allows ({reason})"
    return reason


def open_pdf(data: bytes) -> Any:
    import pymupdf

    try:
        document = cast(Any, pymupdf).open(stream=data, filetype="pdf")
    except Exception as exc:
        raise CorruptDocumentError(f"This PDF is damaged and could not be opened: {exc}") from exc
    if document.needs_pass:
        document.close()
        raise EncryptedDocumentError(
            "This PDF needs a password to open; remove the password and upload it again"
        )
    return document


def _checked_page_count(document: Any, limits: ExtractionLimits) -> int:
    page_count = int(document.page_count)
    if page_count == 0:
        raise CorruptDocumentError("This PDF has no readable pages; re-export or re-download it")
    if page_count > limits.max_pages:
        raise DocumentTooLargeError(
            f"The PDF has {page_count} pages, more than the {limits.max_pages} allowed"
        )
    return page_count


def _check_readable(plain: Sequence[_PlainPage]) -> list[int]:
    """The 1-based pages that could not be read; raises when nothing readable is left."""
    unreadable = [index + 1 for index, page in enumerate(plain) if page.error]
    if len(unreadable) == len(plain):
        raise CorruptDocumentError(f"No page of this PDF could be read: {plain[0].error}")
    if unreadable and not any(page.paragraphs or page.has_images for page in plain):
        # Not empty: what could hold text did not open.
        raise CorruptDocumentError(
            f"Page {_page_ranges(unreadable)} of this PDF could not be read "
            f"({plain[unreadable[0] - 1].error}) and the other pages are blank"
        )
    return unreadable


@dataclass(frozen=True)
class PdfSurvey:
    """A PDF checked as a whole, without layout analysis or recognition."""

    page_count: int
    ocr_pages: tuple[int, ...]
    """0-based pages that would be recognised (no usable text layer, or OCR forced)."""

    def ocr_left_out(self, limits: ExtractionLimits) -> tuple[int, ...]:
        """The pages to recognise past the document's OCR page budget."""
        return self.ocr_pages[limits.ocr.max_pages :]


def survey_pdf(data: bytes, limits: ExtractionLimits) -> PdfSurvey:
    """Open the PDF, check its page count and readability, and count the pages to recognise.

    Raises:
        CorruptDocumentError, EncryptedDocumentError, DocumentTooLargeError: as
            :func:`extract_pdf` would.
    """
    document = open_pdf(data)
    with document:
        page_count = _checked_page_count(document, limits)
        plain = [_read_plain(document, index) for index in range(page_count)]
        _check_readable(plain)
    return PdfSurvey(
        page_count=page_count,
        ocr_pages=tuple(
            index for index, page in enumerate(plain) if page.ocr_reason(limits) is not None
        ),
    )


def _scans(unread: Sequence[int], ocr: OcrResult) -> list[int]:
    """The pages without text that count as scans: pages left out for lack of budget are
    warned about instead, unless recognition read nothing at all."""
    skip = set(ocr.left_out) if ocr.texts else set()
    return sorted(index for index in unread if index not in skip)


def _scan_reason(ocr: OcrResult) -> str:
    """Why recognition did not give the scanned pages text, in words."""
    if ocr.unavailable:
        return ocr.unavailable
    if ocr.failed and not ocr.illegible:
        return f"text recognition (OCR) failed on them ({ocr.first_failure})"
    return "text recognition (OCR) found nothing legible on them"


def _check_scans(
    scanned: Sequence[int], page_count: int, readable: int, limits: ExtractionLimits, why: str
) -> list[str]:
    """Refuse a document that is mostly scans; else the warning naming its scanned pages."""
    if not scanned:
        return []
    if len(scanned) >= readable or len(scanned) / page_count > limits.max_scanned_fraction:
        raise ScannedPdfError(
            len(scanned),
            page_count,
            f"This PDF is a scan: {len(scanned)} of {page_count} pages have no text layer "
            f"(or one that is not text), and {why}",
        )
    return [
        f"{len(scanned)} of {page_count} pages have no text layer (scanned images, or a layer "
        f"that is not text) and are not searchable ({why}): page {_numbers(scanned)}"
    ]


def _layout_markdown(document: Any, index: int) -> str:
    import pymupdf4llm

    chunks = pymupdf4llm.to_markdown(
        document, pages=[index], page_chunks=True, use_ocr=False, show_progress=False
    )
    return _PICTURE_TEXT_MARKERS.sub("", "".join(chunk["text"] for chunk in chunks))


class _LayoutPass:
    """Runs pymupdf4llm page by page until its budgets are spent, noting every fallback.

    Page lists are 0-based indexes.
    """

    def __init__(
        self,
        document: Any,
        deadline: float,
        clock: Callable[[], float],
        limits: ExtractionLimits,
        failure: str | None = None,
    ) -> None:
        self._document = document
        self._clock = clock
        self._deadline = deadline
        self._max_pages = limits.layout_max_pages
        self._fast_path = not limits.layout_every_page
        self._failure = failure
        self._body_sizes: Counter[float] = Counter()
        self.over_budget: list[int] = []
        self.beyond_page_budget: list[int] = []
        self.failed: list[int] = []
        self.first_failure = ""
        self.dropped_text: list[int] = []
        self.unfaithful: list[int] = []
        self.vertical: list[int] = []
        self.simple: list[int] = []

    def render(self, index: int, plain: _PlainPage) -> str:
        if plain.vertical:
            self.vertical.append(index)
            return plain.markdown
        if self._failure is not None:
            self.failed.append(index)
            self.first_failure = self._failure
            return plain.markdown
        simple = self._simple(index, plain)
        if simple is not None:
            return simple
        if index >= self._max_pages:
            self.beyond_page_budget.append(index)
            return plain.markdown
        if self.over_budget or self._clock() >= self._deadline:
            self.over_budget.append(index)
            return plain.markdown
        try:
            markdown = apply_fixes(_layout_markdown(self._document, index), plain.fixes)
        except Exception as exc:
            self.failed.append(index)
            self.first_failure = self.first_failure or (str(exc) or type(exc).__name__)
            return plain.markdown
        if _count_alnum(markdown) < LAYOUT_KEEP_RATIO * plain.letters:
            self.dropped_text.append(index)
            return plain.markdown
        layer = plain.layer.text if plain.layer else plain.markdown
        checked = reconcile(markdown, layer)
        if checked.verdict == "plain":
            self.unfaithful.append(index)
            return with_layout_structure(checked.markdown, plain.paragraphs, layer)
        return checked.markdown

    def _simple(self, index: int, plain: _PlainPage) -> str | None:
        """The fast path's Markdown for a page that needs no layout analysis, else None."""
        if not self._fast_path:
            return None
        page = self._document[index]
        if needs_layout(page, plain.blocks, plain.has_images):
            return None
        body = self._body_sizes.most_common(1)[0][0] if self._body_sizes else None
        simple = simple_markdown(page, body)
        if simple is None:
            return None
        self._body_sizes[simple.body] += 1
        self.simple.append(index)
        return apply_fixes(simple.markdown, plain.fixes)


@dataclass(frozen=True)
class PdfPart:
    """Pages ``start`` to ``start + len(bodies) - 1`` (0-based) of a PDF, before the
    document-level checks; :func:`join_pdf_parts` turns the parts into an :class:`Extraction`.

    Page lists are 0-based indexes into the whole document.
    """

    page_count: int
    start: int
    bodies: tuple[str, ...]
    scanned: tuple[int, ...] = ()
    """Pages without a text layer, or with one that is not text, that recognition did not
    read (left out ones included)."""
    ocr: OcrResult = field(default_factory=OcrResult)
    """What recognition made of this part's pages without usable text."""
    unreadable: tuple[int, ...] = ()
    read_error: str = ""
    over_budget: tuple[int, ...] = ()
    beyond_page_budget: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    layout_failure: str = ""
    dropped_text: tuple[int, ...] = ()
    unfaithful: tuple[int, ...] = ()
    """Pages whose layout Markdown lost or invented words against the text layer."""
    vertical: tuple[int, ...] = ()
    """Vertical CJK pages, read column by column."""
    simple: tuple[int, ...] = ()
    """Pages that took the fast path (no layout analysis needed)."""
    implausible: tuple[int, ...] = ()
    """Pages whose text layer is not words (:mod:`extract.ocr.plausibility`)."""
    figures: tuple[Figure, ...] = ()
    """The figures of this part's pages (:mod:`extract.figures`)."""


def extract_pdf_part(
    data: bytes,
    limits: ExtractionLimits,
    pages: range | None = None,
    *,
    ocr: OcrEngine | None = None,
    clock: Callable[[], float] = time.monotonic,
    progress: Progress | None = None,
    layout_failure: str | None = None,
    ocr_left_out: Collection[int] = (),
) -> PdfPart:
    """Read the pages ``pages`` (0-based; all when ``None``) of a PDF.

    Pages without a usable text layer are recognised (OCR, within ``limits.ocr``'s
    budget, counted for this part), except those in ``ocr_left_out``: pages past the
    whole document's OCR page budget, reported as left out. ``progress`` is told ``(pages_done,
    len(pages))`` after each page. With ``layout_failure`` (why an earlier attempt
    failed) every page is read as plain text. When the part is the whole document,
    the document-level checks run before layout analysis (so a scan is refused
    before any layout work).

    Raises:
        Same as :func:`extract_pdf`.
    """
    started = clock()  # the budgets count from here, so they include the plain pass
    document = open_pdf(data)
    with document:
        page_count = _checked_page_count(document, limits)
        wanted = range(page_count) if pages is None else pages
        if wanted.start < 0 or wanted.stop > page_count or wanted.step != 1 or not wanted:
            raise CorruptDocumentError(
                f"Pages {wanted.start + 1}-{wanted.stop} asked of a {page_count}-page PDF"
            )
        whole = len(wanted) == page_count
        plain = [_read_plain(document, index) for index in wanted]
        if whole:
            _check_readable(plain)
        unreadable = [wanted.start + i for i, page in enumerate(plain) if page.error]
        reasons = {
            wanted.start + i: reason
            for i, page in enumerate(plain)
            if (reason := page.ocr_reason(limits)) is not None
        }
        done = 0  # pages whose text is final: recognised ones first, then the rest in order

        def page_done() -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(done, len(wanted))

        recognition = recognise_pages(
            lambda index: render_pdf_page(document[index], limits.ocr.dpi),
            sorted(set(reasons) - set(ocr_left_out)),
            limits.ocr,
            deadline=ocr_deadline(started, limits),
            clock=clock,
            engine=ocr,
            on_recognised=lambda _index: page_done(),
        )
        recognition.over_page_budget.extend(sorted(set(reasons) & set(ocr_left_out)))
        recognised = recognition.texts
        unread = [i for i, reason in reasons.items() if reason in _NO_TEXT and i not in recognised]
        if whole:
            _check_scans(
                _scans(unread, recognition),
                page_count,
                page_count - len(unreadable),
                limits,
                _scan_reason(recognition),
            )

        figures = [
            figure
            for index, page in zip(wanted, plain, strict=True)
            if page.error is None
            for figure in _figures(document, index)
        ]
        layout = _LayoutPass(
            document, started + limits.layout_budget(), clock, limits, layout_failure
        )
        bodies: list[str] = []
        for index, page in zip(wanted, plain, strict=True):
            if index in recognised:
                bodies.append(recognised[index])
                continue  # counted when it was recognised
            if page.error or reasons.get(index) in _NO_TEXT:
                bodies.append("")
            else:
                bodies.append("\n\n".join([layout.render(index, page), *page.form_values]))
            page_done()
    return PdfPart(
        page_count=page_count,
        start=wanted.start,
        bodies=tuple(bodies),
        scanned=tuple(sorted(unread)),
        ocr=recognition,
        unreadable=tuple(unreadable),
        read_error=next((page.error or "" for page in plain if page.error), ""),
        over_budget=tuple(layout.over_budget),
        beyond_page_budget=tuple(layout.beyond_page_budget),
        failed=tuple(layout.failed),
        layout_failure=layout.first_failure,
        dropped_text=tuple(layout.dropped_text),
        unfaithful=tuple(layout.unfaithful),
        implausible=tuple(sorted(i for i, reason in reasons.items() if reason == "not_words")),
        vertical=tuple(layout.vertical),
        simple=tuple(layout.simple),
        figures=tuple(figures),
    )


def _figures(document: Any, index: int) -> list[Figure]:
    """The figures of page ``index``; none when finding them fails (never the page's text)."""
    try:
        return find_figures(document[index], index + 1)
    except Exception:
        return []


def join_pdf_parts(
    parts: Sequence[PdfPart], limits: ExtractionLimits, warnings: Sequence[str] = ()
) -> Extraction:
    """The document the consecutive ``parts`` make up, its warnings after ``warnings``.

    Raises:
        CorruptDocumentError: the parts do not cover the document, or no page was readable.
        ScannedPdfError: no text layer on all or most pages.
        EmptyDocumentError: readable pages, but no text and no images.
    """
    ordered = sorted(parts, key=lambda part: part.start)
    page_count = ordered[0].page_count if ordered else 0
    position = 0
    for part in ordered:
        if part.start != position or part.page_count != page_count:
            raise CorruptDocumentError("The parts of this PDF do not fit together")
        position += len(part.bodies)
    if position != page_count or page_count == 0:
        raise CorruptDocumentError("The parts of this PDF do not cover all its pages")

    def joined(pages: Callable[[PdfPart], tuple[int, ...]]) -> list[int]:
        return [index for part in ordered for index in pages(part)]

    unreadable = joined(lambda part: part.unreadable)
    if len(unreadable) == page_count:
        raise CorruptDocumentError(f"No page of this PDF could be read: {ordered[0].read_error}")
    notes = [*warnings]
    recognition = OcrResult.combined([part.ocr for part in ordered])
    readable = page_count - len(unreadable)
    scanned = _scans(joined(lambda part: part.scanned), recognition)
    notes.extend(_check_scans(scanned, page_count, readable, limits, _scan_reason(recognition)))
    notes.extend(recognition.warnings())
    if unreadable:
        first_error = next(part.read_error for part in ordered if part.unreadable)
        notes.append(f"Page {_numbers(unreadable)} could not be read ({first_error})")
    over_budget = joined(lambda part: part.over_budget)
    if over_budget:
        notes.append(
            f"Layout analysis used up its {limits.layout_budget():g} s budget; page "
            f"{_numbers(over_budget)} extracted as plain text (no tables or headings)"
        )
    beyond = joined(lambda part: part.beyond_page_budget)
    if beyond:
        notes.append(
            f"Layout analysis covers the first {limits.layout_max_pages} pages; page "
            f"{_numbers(beyond)} extracted as plain text (no tables or headings)"
        )
    failed = joined(lambda part: part.failed)
    if failed:
        failure = next(part.layout_failure for part in ordered if part.failed)
        notes.append(
            f"Layout analysis failed ({failure}); page {_numbers(failed)} extracted as plain text"
        )
    dropped = joined(lambda part: part.dropped_text)
    if dropped:
        notes.append(
            f"Layout analysis missed most of the text layer on page "
            f"{_numbers(dropped)}; extracted as plain text"
        )
    implausible = joined(lambda part: part.implausible)
    if implausible:
        notes.append(
            f"The text layer of page {_numbers(implausible)} does not read as words in any "
            "language (a bad OCR layer, or fonts without a character map); such pages are "
            "recognised by OCR instead when it can read them"
        )
    unfaithful = joined(lambda part: part.unfaithful)
    if unfaithful:
        notes.append(
            f"Layout analysis lost or invented words against the text layer on page "
            f"{_numbers(unfaithful)}; their text is the text layer's, with the layout's "
            "headings and tables"
        )
    vertical = joined(lambda part: part.vertical)
    if vertical:
        notes.append(
            f"Page {_numbers(vertical)} is vertical writing; read column by column, right to "
            "left, without layout analysis"
        )
    bodies = [body for part in ordered for body in part.bodies]
    extraction = assemble_pages(bodies, "pdf", notes)
    return dataclasses.replace(
        extraction,
        ocr_pages=recognition.recognised_pages,
        figures=tuple(figure for part in ordered for figure in part.figures),
        ocr_lines=recognition.ocr_lines(),
    )


def _numbers(indexes: Sequence[int]) -> str:
    return _page_ranges([index + 1 for index in sorted(indexes)])


def extract_pdf(
    data: bytes,
    limits: ExtractionLimits,
    *,
    ocr: OcrEngine | None = None,
    clock: Callable[[], float] = time.monotonic,
    progress: Progress | None = None,
) -> Extraction:
    """A PDF as Markdown with one ``<!-- page N -->`` section per page, in this process;
    ``progress`` is told ``(pages_done, page_count)`` after each page.

    ``ocr`` overrides the engine ``limits.ocr`` selects (tests and benchmarks).

    Raises:
        CorruptDocumentError: unreadable file, no pages, or no readable page.
        EncryptedDocumentError: a user (open) password is required.
        DocumentTooLargeError: more than ``limits.max_pages`` pages.
        ScannedPdfError: no text layer on all or most pages (see the module docstring).
        EmptyDocumentError: readable pages, but no text and no images.
    """
    part = extract_pdf_part(data, limits, ocr=ocr, clock=clock, progress=progress)
    return join_pdf_parts([part], limits)
