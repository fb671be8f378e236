"""Word, PowerPoint and Excel files through python-docx, python-pptx and openpyxl.

Before any library opens the file, :func:`check_zip_members` sums the declared
uncompressed sizes of its ZIP members against ``max_unpacked_bytes``. The
declared size is a safe bound: Python's ``zipfile`` never inflates a member
past its declared size (a lying header ends in ``BadZipFile``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    ExtractionError,
)
from extract.markdown import assemble_pages, markdown_table
from extract.types import Extraction, ExtractionLimits

if TYPE_CHECKING:
    from docx.table import Table as DocxTable
    from docx.text.paragraph import Paragraph


def check_zip_members(data: bytes, limits: ExtractionLimits) -> None:
    """Refuse a ZIP container that would unpack to more than the limits allow.

    Raises:
        CorruptDocumentError: when the bytes are not a readable ZIP archive.
        DocumentTooLargeError: when the members add up to more than ``max_unpacked_bytes``.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            total = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocumentError(f"The file is a damaged ZIP container: {exc}") from exc
    if total > limits.max_unpacked_bytes:
        raise DocumentTooLargeError(
            f"The file unpacks to {total / 2**20:.0f} MB, more than the "
            f"{limits.max_unpacked_bytes / 2**20:.0f} MB allowed; it may be a zip bomb"
        )


#: Most cells a workbook may have, counting the blanks between values in a row.
MAX_WORKBOOK_CELLS = 5_000_000


def _reading_failed(kind: str, exc: Exception) -> CorruptDocumentError:
    reason = str(exc) or type(exc).__name__
    return CorruptDocumentError(f"This {kind} file is damaged and could not be read: {reason}")


def _check_page_count(count: int, noun: str, limits: ExtractionLimits) -> None:
    if count > limits.max_pages:
        raise DocumentTooLargeError(
            f"The document has {count} {noun}, more than the {limits.max_pages} allowed"
        )


# --- DOCX -------------------------------------------------------------------------------


def _heading_level(paragraph: Paragraph) -> int:
    style = paragraph.style.name if paragraph.style is not None else ""
    style = style or ""
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        suffix = style.removeprefix("Heading ")
        if suffix.isdigit():
            return min(int(suffix), 6)
    return 0


def _docx_paragraph(paragraph: Paragraph) -> str:
    text = paragraph.text.strip()
    if not text:
        return ""
    level = _heading_level(paragraph)
    if level:
        return "#" * level + " " + " ".join(text.split())
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style.startswith("List"):
        return "- " + text
    return text


def _docx_table(table: DocxTable) -> str:
    return markdown_table([cell.text for cell in row.cells] for row in table.rows)


def extract_docx(data: bytes, limits: ExtractionLimits) -> Extraction:
    """A Word document as one page: headings, paragraphs, lists and tables in order.

    DOCX has no fixed pagination (pages exist only once a word processor lays
    the text out), so the whole document is page 1.
    """
    check_zip_members(data, limits)
    try:
        import docx
        from docx.table import Table as DocxTable

        document = docx.Document(io.BytesIO(data))
        blocks = [
            _docx_table(item) if isinstance(item, DocxTable) else _docx_paragraph(item)
            for item in document.iter_inner_content()
        ]
    except (ExtractionError, MemoryError):
        raise  # a MemoryError is reported by the sandbox as the memory limit it hit
    except Exception as exc:
        raise _reading_failed("Word", exc) from exc
    return assemble_pages(["\n\n".join(block for block in blocks if block)], "docx")


# --- PPTX -------------------------------------------------------------------------------


def _shape_blocks(shapes: Any, title_id: int | None) -> Iterator[str]:
    for shape in shapes:
        if shape.shape_id == title_id:
            continue
        if hasattr(shape, "shapes"):  # a group shape
            yield from _shape_blocks(shape.shapes, title_id)
        elif getattr(shape, "has_table", False):
            yield markdown_table([cell.text for cell in row.cells] for row in shape.table.rows)
        elif getattr(shape, "has_text_frame", False):
            for paragraph in shape.text_frame.paragraphs:
                text = " ".join(paragraph.text.split())
                if text:
                    yield ("  " * paragraph.level + "- " + text) if paragraph.level else text


def _slide_markdown(slide: Any, number: int) -> tuple[str, bool]:
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
    title_id = title_shape.shape_id if title_shape is not None else None
    blocks = list(_shape_blocks(slide.shapes, title_id))
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        notes_text = " ".join(notes.text.split()) if notes is not None else ""
        if notes_text:
            blocks.append("> Notes: " + notes_text)
    has_text = bool(title) or any(block.strip() for block in blocks)
    heading = f"## Slide {number}: {title}" if title else f"## Slide {number}"
    return "\n\n".join([heading, *blocks]), has_text


def extract_pptx(data: bytes, limits: ExtractionLimits) -> Extraction:
    """A presentation with one page per slide, each opening with a ``## Slide N`` heading."""
    check_zip_members(data, limits)
    try:
        import pptx

        presentation = pptx.Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
        _check_page_count(len(slides), "slides", limits)
        rendered = [_slide_markdown(slide, number) for number, slide in enumerate(slides, 1)]
    except (ExtractionError, MemoryError):
        raise  # a MemoryError is reported by the sandbox as the memory limit it hit
    except Exception as exc:
        raise _reading_failed("PowerPoint", exc) from exc
    if not any(has_text for _, has_text in rendered):
        raise EmptyDocumentError("The presentation has no text on any slide")
    return assemble_pages([body for body, _ in rendered], "pptx")


# --- XLSX -------------------------------------------------------------------------------


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _sheet_rows(sheet: Any, budget: list[int]) -> list[list[str]]:
    """The sheet's non-empty rows, read as they are stored.

    The sheet's declared ``<dimension>`` is ignored: it is only a claim (``A1:XFD1048576``
    declares 17 billion cells, and read as such would pad every row to 16,384 columns
    and yield a million empty rows). ``budget`` holds the cells the workbook may still
    have; past it the workbook is too large.
    """
    sheet.reset_dimensions()
    rows: list[list[str]] = []
    for values in sheet.iter_rows(values_only=True):
        budget[0] -= len(values)
        if budget[0] < 0:
            raise DocumentTooLargeError(
                f"The workbook has more than {MAX_WORKBOOK_CELLS:,} cells (sheet "
                f"{sheet.title!r} reaches past that, counting blanks between values); "
                "split it or save only the sheets you need"
            )
        row = [_cell_text(value) for value in values]
        if any(cell.strip() for cell in row):
            rows.append(row)
    width = max((max((i + 1 for i, c in enumerate(row) if c.strip()), default=0) for row in rows),
                default=0)  # fmt: skip
    return [row[:width] for row in rows]


def extract_xlsx(data: bytes, limits: ExtractionLimits) -> Extraction:
    """A workbook with one page per sheet: a ``## Sheet: name`` heading and a table.

    Cells show their cached values (formulas are not evaluated).
    """
    check_zip_members(data, limits)
    try:
        import openpyxl

        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            sheets = list(workbook.worksheets)
            _check_page_count(len(sheets), "sheets", limits)
            budget = [MAX_WORKBOOK_CELLS]
            tables = [(sheet.title, _sheet_rows(sheet, budget)) for sheet in sheets]
        finally:
            workbook.close()
    except (ExtractionError, MemoryError):
        raise  # a MemoryError is reported by the sandbox as the memory limit it hit
    except Exception as exc:
        raise _reading_failed("Excel", exc) from exc
    if not any(rows for _, rows in tables):
        raise EmptyDocumentError("The workbook has no values in any sheet")
    bodies = [
        f"## Sheet: {title}\n\n{markdown_table(rows) or '_(empty sheet)_'}"
        for title, rows in tables
    ]
    return assemble_pages(bodies, "xlsx")
