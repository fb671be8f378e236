"""Text recognition (OCR) for pages without a usable text layer, and for images.

Three parts, each usable alone (one module each; this package re-exports what callers use):

* **Which pages** (:mod:`extract.ocr.text_layer`). :func:`describe_pdf_page` measures a PDF
  page's text layer and :func:`ocr_reason` decides: a page is recognised when it has *no text*
  (fewer than :data:`MIN_TEXT_CHARS` letters or digits, but an image or ink on the page),
  *garbage text* (at least ``GARBAGE_SHARE`` of its characters are U+FFFD, control,
  private-use or unassigned code points: glyphs without a Unicode mapping; or a few
  characters, mostly symbols), *not words* (its tokens are shaped like no word of any script:
  :mod:`extract.ocr.plausibility`), an English OCR layer over a scan with too many *misread*
  words (``aieiabership``: letter trigrams no English word has), or text that covers a *tiny
  fraction* of a page that is mostly image (a scan with a stamped page number), or when forced.
  Any other page keeps its text layer and is never recognised. A garbage or not-words layer
  that recognition does not read (OCR off, over budget, illegible) is not used either: the page
  is left without text, as a scan would be (``UNUSABLE``).
* **Which engine** (:mod:`extract.ocr.engines`). :func:`select_engine` resolves ``auto |
  rapidocr | tesseract | off``: RapidOCR ships its PP-OCR models inside its wheel and runs on
  onnxruntime, so ``auto`` works offline after a plain install; Tesseract is used when asked
  for, or by ``auto`` when RapidOCR is missing, if the ``tesseract`` program is installed.
* **Recognising** (:mod:`extract.ocr.recognise`). :func:`recognise_pages` renders
  (:mod:`extract.ocr.page_image`) and reads pages one by one within the document's budget
  (``OcrOptions.max_pages`` pages and ``OcrOptions.page_seconds`` per page, never past the
  deadline the caller gives), turns the engine's text boxes into paragraphs in reading order
  (:func:`layout_text` in :mod:`extract.ocr.layout`, a recursive XY cut that keeps columns
  apart) and reports an :class:`OcrResult` (:mod:`extract.ocr.result`).

Nothing here touches the network: both engines read files that are installed.
"""

from __future__ import annotations

from extract.ocr.engines import (
    NoEngine,
    OcrEngine,
    TextBox,
    rapidocr_available,
    select_engine,
    tesseract_binary,
)
from extract.ocr.layout import layout_text
from extract.ocr.page_image import MAX_RENDER_SIDE, PageImage, render_pdf_page
from extract.ocr.recognise import ocr_deadline, recognise_pages
from extract.ocr.result import OcrResult
from extract.ocr.text_layer import (
    MIN_TEXT_CHARS,
    UNUSABLE,
    OcrReason,
    TextLayer,
    describe_pdf_page,
    ocr_reason,
)

__all__ = [
    "MAX_RENDER_SIDE",
    "MIN_TEXT_CHARS",
    "UNUSABLE",
    "NoEngine",
    "OcrEngine",
    "OcrReason",
    "OcrResult",
    "PageImage",
    "TextBox",
    "TextLayer",
    "describe_pdf_page",
    "layout_text",
    "ocr_deadline",
    "ocr_reason",
    "rapidocr_available",
    "recognise_pages",
    "render_pdf_page",
    "select_engine",
    "tesseract_binary",
]
