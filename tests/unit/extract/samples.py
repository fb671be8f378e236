"""Small real documents built in code, one builder per format."""

from __future__ import annotations

import io
from typing import Any

import pymupdf as _pymupdf

pymupdf: Any = _pymupdf  # PyMuPDF ships partial type hints

POOR_OCR = (  # scanned_ocr_layer/pdf-with-ocr-text.pdf's own layer, its words shuffled
    "Eeairing to keep you posted on the progress of the Foundation you Kill tee interested "
    "to knot that to defce the Foundation hes received the fallowings A letter from the "
    "Aaalggfitted fc-ugsx Company eecepting 3s«»teership and enclosing their cheek Corporation "
    "accepting aieiabership Met eneloalcg their check and JMBWeil contracts mea-bershlp end "
    "wrelosing aomberehip accepting esffiteersftip executed con tracts wssibership Rnd saifii "
    "ttsrootj tanntxim contra-eta letter froas ltd Savannah Refining "
)

TABLE_ROWS = (("Region", "Revenue"), ("North", "120"), ("South", "95"))


def _draw_ruled_table(page: Any, top: float) -> None:
    left, cell_width, cell_height = 72.0, 150.0, 24.0
    rows, cols = len(TABLE_ROWS), len(TABLE_ROWS[0])
    for row in range(rows + 1):
        y = top + row * cell_height
        page.draw_line((left, y), (left + cols * cell_width, y))
    for col in range(cols + 1):
        x = left + col * cell_width
        page.draw_line((x, top), (x, top + rows * cell_height))
    for row, values in enumerate(TABLE_ROWS):
        for col, value in enumerate(values):
            page.insert_text((left + col * cell_width + 6, top + row * cell_height + 16), value)


def _new_page(document: Any) -> Any:
    return document.new_page(width=595, height=842)


def pdf_report() -> bytes:
    """Two pages: a heading, a paragraph and a ruled table, then a second page of prose."""
    document: Any = pymupdf.open()
    first = _new_page(document)
    first.insert_text((72, 80), "Quarterly Report", fontsize=24)
    first.insert_text((72, 120), "Revenue grew in every region this quarter.", fontsize=11)
    _draw_ruled_table(first, top=150)
    second = _new_page(document)
    second.insert_text((72, 100), "The second page explains the method in detail.", fontsize=11)
    return bytes(document.tobytes())


def _dark_bar_page(document: Any) -> None:
    """A scan with a dark bar on white: not blank, so recognition is asked to read it."""
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 100, 100), False)
    pixmap.set_rect(pixmap.irect, (255,))
    pixmap.set_rect(pymupdf.IRect(10, 10, 90, 20), (0,))
    _new_page(document).insert_image(pymupdf.Rect(0, 0, 595, 842), pixmap=pixmap)


def _image_page(document: Any) -> None:
    """A scanned blank sheet: an off-white image over the whole page, nothing legible on it."""
    page = _new_page(document)
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 200, 200), False)
    pixmap.set_rect(pixmap.irect, (238, 236, 230))
    page.insert_image(page.rect, pixmap=pixmap)


def pdf_pages(kinds: str) -> bytes:
    """One page per letter: ``t`` a page of text, ``s`` a scan of a blank sheet (an image, no
    text layer, nothing for OCR to read), ``d`` a scan with a dark bar (an engine reads it)."""
    document: Any = pymupdf.open()
    for number, kind in enumerate(kinds, start=1):
        if kind == "t":
            page = _new_page(document)
            page.insert_text((72, 100), f"Page {number} has a real text layer.", fontsize=11)
        elif kind == "d":
            _dark_bar_page(document)
        else:
            _image_page(document)
    return bytes(document.tobytes())


def pdf_encrypted(*, user_password: str, owner_password: str) -> bytes:
    """A one-page PDF encrypted with AES-256."""
    document: Any = pymupdf.open()
    _new_page(document).insert_text((72, 100), "Confidential figures.", fontsize=11)
    return bytes(
        document.tobytes(
            encryption=pymupdf.PDF_ENCRYPT_AES_256,
            user_pw=user_password,
            owner_pw=owner_password,
        )
    )


def docx_report() -> bytes:
    """A Word document with a title, a heading, a paragraph, a list item and a table."""
    import docx

    document = docx.Document()
    document.add_heading("Annual Summary", level=1)
    document.add_paragraph("Sales rose sharply.")
    document.add_heading("Details", level=2)
    document.add_paragraph("Watch the margins", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Item"
    table.cell(0, 1).text = "Cost | net"
    table.cell(1, 0).text = "Paper"
    table.cell(1, 1).text = "12"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_deck() -> bytes:
    """Two slides: a titled bullet slide and a slide holding a table."""
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Roadmap"
    first.placeholders[1].text_frame.text = "Ship the search API"
    first.notes_slide.notes_text_frame.text = "Mention the beta users"
    second = presentation.slides.add_slide(presentation.slide_layouts[6])
    shape = second.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(4), Inches(1.5))
    for (row, col), text in {
        (0, 0): "Quarter",
        (0, 1): "Goal",
        (1, 0): "Q1",
        (1, 1): "Beta",
    }.items():
        shape.table.cell(row, col).text = text
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def xlsx_workbook() -> bytes:
    """Two sheets: ``Prices`` with a header and rows, ``Notes`` with one cell."""
    import openpyxl

    workbook = openpyxl.Workbook()
    prices = workbook.active
    prices.title = "Prices"
    prices.append(["Fruit", "Price"])
    prices.append(["Apple", 1.5])
    prices.append(["Pear|Green", 2])
    notes = workbook.create_sheet("Notes")
    notes["A1"] = "Prices include tax"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def png_image(text: str = "Invoice number 4711 is due on the first of March") -> bytes:
    """A PNG of one printed line of text on white, 150 dpi."""
    document: Any = pymupdf.open()
    page = document.new_page(width=420, height=60)
    page.insert_text((12, 36), text, fontsize=14)
    data = bytes(page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png"))
    document.close()
    return data


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels, with almost no pixel data."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )
