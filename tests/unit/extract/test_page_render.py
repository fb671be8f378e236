"""Drawing a page of an original, in the sandbox (extract.page_render via SandboxPool.render)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pymupdf
import pytest
from PIL import Image

from extract import CorruptDocumentError, EncryptedDocumentError, SandboxPool, extract_document
from extract.errors import ExtractionError, ExtractionTimeout, UnsupportedFormatError
from extract.locate import WordBox
from extract.page_render import MAX_WIDTH, RenderRequest, render_page
from extract.types import ExtractionLimits
from tests.support.paths import CORPUS_DIR

TEXT = (
    "The survey team measured glacier retreat at forty stations along the fjord, finding "
    "that the calving front moved back by nine hundred metres in one season."
)
LIMITS = ExtractionLimits(timeout_seconds=30)


def _pdf(rotation: int = 0) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 400, 540, 500), TEXT, fontsize=12)
    page.insert_textbox(pymupdf.Rect(72, 100, 540, 200), "An unrelated heading", fontsize=12)
    page.set_rotation(rotation)
    data: bytes = doc.tobytes()
    doc.close()
    return data


def _yellow(png: bytes) -> int:
    data = Image.open(io.BytesIO(png)).convert("RGB").reduce(4).tobytes()
    pixels = zip(data[0::3], data[1::3], data[2::3], strict=True)
    return sum(1 for r, g, b in pixels if r > 200 and g > 180 and b < 190 and r - b > 40)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(0, workers=1) as sandboxes:
        yield sandboxes


def test_a_passage_is_marked_and_cropped_to(pool: SandboxPool) -> None:
    whole = pool.render(_pdf(), RenderRequest(kind="pdf", page=1, passage=TEXT), limits=LIMITS)
    assert whole.covered == 1.0 and not whole.cropped
    assert whole.width == 1240  # A4 at 150 dpi
    assert _yellow(whole.png) > 0
    crop = pool.render(
        _pdf(), RenderRequest(kind="pdf", page=1, passage=TEXT, crop=True, width=800),
        limits=LIMITS,
    )  # fmt: skip
    assert crop.cropped and crop.width == 800
    assert crop.height < 300
    assert crop.region is not None and 380 < crop.region[1] < 400
    plain = pool.render(_pdf(), RenderRequest(kind="pdf", page=1), limits=LIMITS)
    assert _yellow(plain.png) == 0 and plain.covered is None


def test_a_rotated_page_is_marked_where_its_words_are() -> None:
    drawn = render_page(
        _pdf(rotation=90), RenderRequest(kind="pdf", page=1, passage=TEXT, crop=True)
    )
    assert drawn.covered == 1.0
    assert drawn.height > drawn.width  # the text runs down the rotated page
    # The marks are inside the crop: the words are turned with the page.
    assert _yellow(drawn.png) > 0.2 * (drawn.width // 4) * (drawn.height // 4)


def test_an_image_document_is_its_own_page() -> None:
    picture = Image.new("RGB", (3000, 1000), "white")
    out = io.BytesIO()
    picture.save(out, format="PNG")
    drawn = render_page(out.getvalue(), RenderRequest(kind="image", page=1, width=600))
    assert (drawn.width, drawn.height, drawn.page_count) == (600, 200, 1)
    with pytest.raises(UnsupportedFormatError):
        render_page(out.getvalue(), RenderRequest(kind="image", page=2))


def test_widths_are_bounded_once() -> None:
    drawn = render_page(_pdf(), RenderRequest(kind="pdf", page=1, width=100_000))
    assert drawn.width == MAX_WIDTH


def _corpus(category: str) -> list[str]:
    manifest = json.loads((CORPUS_DIR / "manifest.json").read_text())
    return [entry["path"] for entry in manifest if entry["category"] == category]


@pytest.mark.skipif(not CORPUS_DIR.exists(), reason="needs the shared corpus")
@pytest.mark.parametrize(
    "path",
    ["corrupted/invalid.pdf", "corrupted/empty.pdf", "corrupted/issue9418.pdf",
     "encrypted/aes-256.pdf", "corrupted/Pages-tree-refs.pdf",
     "long_100plus/pdf2image-memory-error-test-400p.pdf"],
)  # fmt: skip
def test_hostile_corpus_pdfs_draw_or_fail_cleanly(pool: SandboxPool, path: str) -> None:
    assert path in _corpus(path.split("/")[0])
    data = (CORPUS_DIR / path).read_bytes()
    try:
        drawn = pool.render(data, RenderRequest(kind="pdf", page=1), limits=LIMITS)
    except ExtractionError as error:
        assert isinstance(
            error, CorruptDocumentError | EncryptedDocumentError | UnsupportedFormatError
        ), error
    else:
        assert drawn.png.startswith(b"\x89PNG") and drawn.width > 0


def test_drawing_that_takes_too_long_is_stopped() -> None:
    # A fresh child cannot even start Python within a millisecond.
    with SandboxPool(0, workers=1) as fresh, pytest.raises(ExtractionTimeout):
        fresh.render(
            _pdf(),
            RenderRequest(kind="pdf", page=1),
            limits=ExtractionLimits(timeout_seconds=0.001),
        )


def _scan() -> bytes:
    """A page of text made into a scan: one picture, no text layer."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 200, 540, 320), TEXT, fontsize=14)
    pixmap = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY, alpha=False)
    scan = pymupdf.open()
    scan.new_page(width=page.rect.width, height=page.rect.height).insert_image(
        page.rect, pixmap=pixmap
    )
    data: bytes = scan.tobytes()
    return data


def test_a_passage_is_marked_on_a_page_read_by_ocr_where_its_lines_were_recognised() -> None:
    scan = _scan()
    extraction = extract_document(scan, "scan.pdf", None)
    if not extraction.ocr_pages:
        pytest.skip("no OCR engine available")
    assert extraction.ocr_pages == (1,)
    lines = tuple(WordBox(*line.box, line.text) for line in extraction.ocr_lines)
    assert lines and all(0 <= value <= 1 for line in lines for value in line[:4])
    passage = extraction.markdown.split("-->", 1)[1]
    without = render_page(scan, RenderRequest(kind="pdf", page=1, passage=passage))
    assert without.covered == 0.0  # the scan has no words of its own
    drawn = render_page(
        scan, RenderRequest(kind="pdf", page=1, passage=passage, crop=True, ocr_lines=lines)
    )
    assert drawn.covered is not None and drawn.covered >= 0.9
    assert drawn.region is not None and 180 < drawn.region[1] < 215  # where the text was
    assert _yellow(drawn.png) > 0
