"""A PDF with figures, made here: a chart drawn in vectors and a photo, each captioned, a rule
and a logo in the page furniture, and a ruled table full of words."""

from __future__ import annotations

import io

import pymupdf
from PIL import Image

CHART_CAPTION = "Figure 1: Glacier retreat by survey station, 1990 to 2020."
PHOTO_CAPTION = "Fig. 2. The calving front seen from the fjord."
TEXT = (
    "The survey measured glacier retreat at forty stations. As Figure 1 shows, the retreat "
    "was fastest near the fjord, where the calving front lost nine hundred metres."
)


def _photo() -> bytes:
    image = Image.new("RGB", (300, 200), (90, 140, 200))
    for x in range(0, 300, 20):
        for y in range(100, 200):
            image.putpixel((x, y), (240, 240, 250))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def figure_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()  # A4: 595 x 842
    page.draw_line((50, 30), (545, 30), width=0.5)  # a running rule in the top margin
    page.insert_image(pymupdf.Rect(500, 10, 540, 40), stream=_photo())  # a logo there too
    page.insert_textbox(pymupdf.Rect(72, 60, 523, 120), TEXT, fontsize=11)
    # Figure 1: a bar chart drawn in vectors.
    page.draw_rect(pymupdf.Rect(100, 140, 480, 330), color=(0, 0, 0), width=0.8)
    for number, height in enumerate((40, 90, 150, 120, 60)):
        x = 130 + number * 65
        page.draw_rect(pymupdf.Rect(x, 330 - height, x + 40, 330), color=None, fill=(0.2, 0.4, 0.8))
    page.insert_text((130, 345), "A      B      C      D      E", fontsize=9)
    page.insert_textbox(pymupdf.Rect(100, 352, 480, 380), CHART_CAPTION, fontsize=10)
    # Figure 2: a photo.
    page.insert_image(pymupdf.Rect(150, 420, 450, 620), stream=_photo())
    page.insert_textbox(pymupdf.Rect(150, 628, 450, 660), PHOTO_CAPTION, fontsize=10)
    # A ruled table full of words: not a figure.
    for row in range(6):
        y = 680 + row * 20
        page.draw_line((72, y), (523, y), width=0.5)
        page.insert_text(
            (76, y + 14), "station north ice cores forty metres retreat " * 2, fontsize=7
        )
    data: bytes = doc.tobytes()
    doc.close()
    return data
