"""Text recognition (OCR) for pages without a usable text layer, and for images.

Three parts, each usable alone:

* **Which pages.** :func:`describe_pdf_page` measures a PDF page's text layer and
  :func:`ocr_reason` decides: a page is recognised when it has *no text* (fewer
  than :data:`MIN_TEXT_CHARS` letters or digits, but an image or ink on the
  page), *garbage text* (at least :data:`GARBAGE_SHARE` of its characters are
  U+FFFD, control, private-use or unassigned code points: glyphs without a
  Unicode mapping; or a few characters, mostly symbols), or text that covers a *tiny fraction* of a page that is
  mostly image (a scan with a stamped page number), or when forced. Any other
  page keeps its text layer and is never recognised.
* **Which engine.** :func:`select_engine` resolves ``auto | rapidocr | tesseract
  | off``: RapidOCR ships its PP-OCR models inside its wheel and runs on
  onnxruntime, so ``auto`` works offline after a plain install; Tesseract is used
  when asked for, or by ``auto`` when RapidOCR is missing, if the ``tesseract``
  program is installed.
* **Recognising.** :func:`recognise_pages` renders and reads pages one by one
  within the document's budget (``OcrOptions.max_pages`` pages and
  ``OcrOptions.page_seconds`` per page, never past the deadline the caller gives)
  and turns the engine's text boxes into paragraphs in reading order
  (:func:`layout_text`, a recursive XY cut that keeps columns apart).

Nothing here touches the network: both engines read files that are installed.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import shutil
import statistics
import subprocess
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from extract.markdown import page_ranges
from extract.types import ExtractionLimits, OcrOptions

MIN_TEXT_CHARS = 10
"""Below this many letters/digits, a page that shows an image (or ink) has no text layer."""
GARBAGE_SHARE = 0.3
"""A text layer with at least this share of unmapped characters is garbage."""
MIN_RECOGNISED_CHARS = 4
"""Recognised text with fewer letters/digits than this is noise (specks on a blank page)."""
IMAGE_COVER_SHARE = 0.75
"""A page whose images cover at least this share of it is "mostly image"…"""
TINY_TEXT_SHARE = 0.05
"""…and its text layer is a tiny fraction when its blocks cover less than this share of it."""
INK_SHARE = 0.002
"""A page with no text and no image is still printed (vector or unmapped glyphs) above this
share of dark pixels in a coarse rendering."""
MAX_RENDER_SIDE = 4000
"""Longest side, in pixels, of a page image handed to an engine (larger pages render coarser)."""
OCR_TIMEOUT_SHARE = 0.75
"""Share of the extraction timeout that recognition may use, so a long scan ends with a
warning for the pages it did not reach instead of being killed."""
COLUMN_GAP = 0.5
"""An empty vertical strip at least this many line heights wide separates columns (engines
report whole lines, so a gap that wide is never a word space)."""
BLANK_SHARE = 0.0005
"""A page image with fewer pixels than this share far from its background colour is blank:
it is not handed to the engine."""
STRADDLERS = 25
"""A column gutter may be crossed by one box in this many (a long line, a hyphen jutting in)."""
_INK_DPI = 18
_UNMAPPED_CATEGORIES = frozenset({"Cc", "Co", "Cn", "Cs"})

OcrReason = Literal["no_text", "garbage_text", "tiny_text", "forced"]
"""Why a page is recognised instead of read from its text layer."""


@dataclass(frozen=True)
class PageImage:
    """A page as an 8-bit grayscale raster, row by row."""

    width: int
    height: int
    samples: bytes

    def __post_init__(self) -> None:
        if len(self.samples) != self.width * self.height:
            raise ValueError(f"{len(self.samples)} samples for a {self.width}x{self.height} image")

    def is_blank(self) -> bool:
        """True when hardly any pixel stands out from the background (nothing to read)."""
        import numpy as np

        pixels = np.frombuffer(self.samples, dtype=np.uint8)
        if pixels.size == 0:
            return True
        background = int(np.bincount(pixels, minlength=256).argmax())
        standing_out = np.count_nonzero(np.abs(pixels.astype(np.int16) - background) > 64)
        return bool(standing_out < BLANK_SHARE * pixels.size)

    def pgm(self) -> bytes:
        """The image as a binary PGM file (what Tesseract reads on stdin)."""
        return f"P5 {self.width} {self.height} 255\n".encode() + self.samples


@dataclass(frozen=True)
class TextBox:
    """One recognised run of text (usually a line) and its axis-aligned bounds in pixels."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str


class OcrEngine(Protocol):
    """An OCR engine: text boxes from a page image, in any order."""

    @property
    def name(self) -> str: ...

    def recognise(self, image: PageImage) -> list[TextBox]: ...


@dataclass(frozen=True)
class NoEngine:
    """No engine will read pages, and why (said in the scanned-document error)."""

    reason: str


@dataclass(frozen=True)
class TextLayer:
    """What a page's own text layer holds, measured for :func:`ocr_reason`."""

    text: str
    text_area: float
    """Share of the page covered by text blocks (0-1)."""
    image_area: float
    """Share of the page covered by images (0-1, overlaps counted once per image)."""
    ink: float = 0.0
    """Share of dark pixels in a coarse rendering (measured only for pages with no text
    and no image; 0 otherwise)."""

    @property
    def letters(self) -> int:
        return sum(1 for char in self.text if char.isalnum())

    @property
    def symbol_share(self) -> float:
        """Share of the non-space characters that are neither letters nor digits."""
        characters = [char for char in self.text if not char.isspace()]
        if not characters:
            return 0.0
        return sum(1 for char in characters if not char.isalnum()) / len(characters)

    @property
    def unmapped_share(self) -> float:
        characters = [char for char in self.text if not char.isspace()]
        if not characters:
            return 0.0
        unmapped = sum(1 for char in characters if _unmapped(char))
        return unmapped / len(characters)


def _unmapped(char: str) -> bool:
    return char == "\ufffd" or unicodedata.category(char) in _UNMAPPED_CATEGORIES


def ocr_reason(layer: TextLayer, *, force: bool = False) -> OcrReason | None:
    """Why the page must be recognised, or None when its text layer is good (see module)."""
    if layer.letters < MIN_TEXT_CHARS:
        if layer.image_area > 0 or layer.ink >= INK_SHARE:
            return "no_text"
        if layer.symbol_share > 0.5:  # a few glyphs mapped to punctuation: "7+%-" for "Phone"
            return "garbage_text"
        return "forced" if force else None
    if layer.unmapped_share >= GARBAGE_SHARE:
        return "garbage_text"
    if layer.image_area >= IMAGE_COVER_SHARE and layer.text_area < TINY_TEXT_SHARE:
        return "tiny_text"
    return "forced" if force else None


def describe_pdf_page(page: Any, blocks: Sequence[Sequence[Any]]) -> TextLayer:
    """Measure a PyMuPDF page's text layer from its ``get_text("blocks")`` output."""
    rect = page.rect
    area = max(float(rect.width * rect.height), 1.0)
    text = "\n".join(str(block[4]) for block in blocks if block[6] == 0)
    text_area = sum(
        _clipped_area(block[:4], rect)
        for block in blocks
        if block[6] == 0 and str(block[4]).strip()
    )
    image_area = sum(_clipped_area(info["bbox"], rect) for info in page.get_image_info())
    image_area += sum(_clipped_area(block[:4], rect) for block in blocks if block[6] == 1)
    layer = TextLayer(text, min(text_area / area, 1.0), min(image_area / area, 1.0))
    if layer.letters < MIN_TEXT_CHARS and layer.image_area == 0:
        layer = TextLayer(layer.text, layer.text_area, 0.0, ink=_ink_share(page))
    return layer


def _clipped_area(bbox: Sequence[float], rect: Any) -> float:
    x0, y0, x1, y1 = (float(value) for value in bbox[:4])
    width = min(x1, float(rect.x1)) - max(x0, float(rect.x0))
    height = min(y1, float(rect.y1)) - max(y0, float(rect.y0))
    return max(width, 0.0) * max(height, 0.0)


def _ink_share(page: Any) -> float:
    import pymupdf

    pixmap = page.get_pixmap(dpi=_INK_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    samples = bytes(pixmap.samples)
    if not samples:
        return 0.0
    return sum(1 for value in samples if value < 128) / len(samples)


def render_pdf_page(page: Any, dpi: int) -> PageImage:
    """Rasterise a PyMuPDF page to grayscale at ``dpi``, at most :data:`MAX_RENDER_SIDE` pixels."""
    import pymupdf

    longest = max(float(page.rect.width), float(page.rect.height), 1.0)
    dpi = max(min(dpi, int(MAX_RENDER_SIDE * 72 / longest)), 1)
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    samples = bytes(pixmap.samples)
    if pixmap.stride != pixmap.width:  # rows may be padded
        samples = b"".join(
            samples[row * pixmap.stride : row * pixmap.stride + pixmap.width]
            for row in range(pixmap.height)
        )
    return PageImage(pixmap.width, pixmap.height, samples)


# --- engines ---------------------------------------------------------------------------------


RAPIDOCR_MODELS = {
    "Det.model_path": "PP-OCRv6_det_small.onnx",
    "Rec.model_path": "PP-OCRv6_rec_small.onnx",
    "Cls.model_path": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
}
"""The models RapidOCR 3.x ships in its wheel (multilingual Latin, Chinese, Japanese), named
explicitly so RapidOCR never takes its download path."""

RAPIDOCR_LANGUAGES = frozenset({
    "zh", "ja", "en", "af", "az", "bs", "ca", "cs", "cy", "da", "de", "es", "et", "eu", "fi",
    "fr", "ga", "gl", "hr", "hu", "id", "is", "it", "ku", "la", "lb", "lt", "lv", "mi", "ms",
    "mt", "nl", "no", "oc", "pl", "pt", "qu", "rm", "ro", "sk", "sl", "sq", "sv", "sw", "tl",
    "tr", "uz", "vi",
})  # fmt: skip
"""Language hints (ISO 639-1) the bundled PP-OCRv6 model reads; under ``auto``, a hint outside
this set prefers Tesseract when it is installed."""


DETECTION_SIDE = 960
"""Longest side, in pixels, of the image RapidOCR's text detector sees (it scales larger pages
down; lines are then cut from the full rendering for recognition). Detection costs about the
square of this: a page at 150 dpi seen whole (1755 px) took 2.7 CPU-s, at 960 px it takes 0.6
with the same word recall (``docs/benchmarks.md``); 768 px starts merging lines of small print."""
UNCLIP_RATIO = 2.2
"""How far RapidOCR grows each detected text kernel into the line it cuts out (its default is
1.6). Taller cut-outs shrink to fewer pixels at the recogniser's fixed 48-px height, so
recognition costs ~15 % less, with the same word recall; 2.6 loses words."""
_REPORTED_UNCLIP = 1.6
"""The growth :func:`layout_text` was tuned for: boxes are reported shrunk back to it, since
taller boxes overlap the next line and hide the gaps the XY cut splits at."""


class RapidOcrEngine:
    """RapidOCR with the PP-OCR models bundled in its wheel (no download, ever).

    Raises:
        FileNotFoundError: when a bundled model is missing from the installed package.
    """

    name = "rapidocr"

    def __init__(self) -> None:
        import rapidocr

        models = Path(rapidocr.__file__).parent / "models"
        paths = {key: models / filename for key, filename in RAPIDOCR_MODELS.items()}
        for path in paths.values():
            if not path.is_file():
                raise FileNotFoundError(f"RapidOCR's bundled model {path.name} is missing")
        threads = max(int(os.environ.get("OMP_NUM_THREADS", "1") or 1), 1)
        self._engine = rapidocr.RapidOCR(
            params={
                **{key: str(path) for key, path in paths.items()},
                "Global.log_level": "error",
                "Global.use_cls": False,  # pages are upright; saves a model pass per line
                "Rec.rec_batch_num": 1,  # batches pad every line to the widest: more CPU
                # Lines are padded to at least this width (default 320 px): a short word or a
                # table cell cost as much as a third of a line.
                "Rec.rec_img_shape": [3, 48, 48],
                # Shrink what is larger, never blow small images up (the default scales the
                # short side up to 736 px: a one-line image became 5000 px wide).
                "Det.limit_type": "max",
                "Det.limit_side_len": DETECTION_SIDE,
                "Det.unclip_ratio": UNCLIP_RATIO,
                "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )

    def recognise(self, image: PageImage) -> list[TextBox]:
        import numpy as np

        array = np.frombuffer(image.samples, dtype=np.uint8).reshape(image.height, image.width)
        result: Any = self._engine(np.ascontiguousarray(np.stack([array] * 3, axis=-1)))
        if result.boxes is None or result.txts is None:
            return []
        boxes: list[TextBox] = []
        for points, text in zip(result.boxes, result.txts, strict=True):
            if str(text).strip():
                boxes.append(_line_bounds(points, str(text).strip()))
        return boxes


def _line_bounds(points: Sequence[Sequence[float]], text: str) -> TextBox:
    """A detected quadrilateral's bounds, shrunk from :data:`UNCLIP_RATIO`'s growth to
    :data:`_REPORTED_UNCLIP`'s.

    The detector grows a line's kernel (height ``h``) by ``h * ratio / 2`` on every side, so a
    box of height ``H`` had ``h = H / (1 + ratio)``; each side gives back the difference (at most
    a quarter of the width, for a box of a character or two).
    """
    x0, x1 = min(float(p[0]) for p in points), max(float(p[0]) for p in points)
    y0, y1 = min(float(p[1]) for p in points), max(float(p[1]) for p in points)
    kernel = (y1 - y0) / (1 + UNCLIP_RATIO)
    dy = max(kernel * (UNCLIP_RATIO - _REPORTED_UNCLIP) / 2, 0.0)
    dx = min(dy, (x1 - x0) / 4)
    return TextBox(x0 + dx, y0 + dy, x1 - dx, y1 - dy, text)


TESSERACT_LANGUAGES = {
    "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "pt": "por",
    "nl": "nld", "sv": "swe", "da": "dan", "no": "nor", "fi": "fin", "pl": "pol",
    "cs": "ces", "ru": "rus", "uk": "ukr", "el": "ell", "tr": "tur", "ar": "ara",
    "he": "heb", "zh": "chi_sim", "ja": "jpn", "ko": "kor", "hi": "hin",
}  # fmt: skip
"""ISO 639-1 language hints and Tesseract's names for them (others are passed as given)."""


class TesseractEngine:
    """The ``tesseract`` program (Debian ``tesseract-ocr`` plus ``tesseract-ocr-LANG`` data)."""

    name = "tesseract"

    def __init__(self, binary: str, languages: Sequence[str], timeout_seconds: float) -> None:
        self._binary = binary
        self._languages = "+".join(languages)
        self._timeout = timeout_seconds

    def recognise(self, image: PageImage) -> list[TextBox]:
        completed = subprocess.run(
            [self._binary, "stdin", "stdout", "-l", self._languages, "--psm", "3", "tsv"],
            input=image.pgm(),
            capture_output=True,
            timeout=self._timeout,
            check=False,
        )
        if completed.returncode != 0:
            message = completed.stderr.decode("utf-8", errors="replace").strip()
            raise RuntimeError(f"tesseract failed: {message[-300:]}")
        return _tesseract_lines(completed.stdout.decode("utf-8", errors="replace"))


def _tesseract_lines(tsv: str) -> list[TextBox]:
    """Words of Tesseract's TSV grouped into one box per line."""
    lines: dict[tuple[str, str, str, str], list[tuple[int, int, int, int, str]]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        try:
            left, top, width, height = (int(value) for value in cells[6:10])
            confidence = float(cells[10])
        except ValueError:
            continue
        if confidence < 0:
            continue
        key = (cells[1], cells[2], cells[3], cells[4])
        lines.setdefault(key, []).append((left, top, left + width, top + height, cells[11]))
    return [
        TextBox(
            min(w[0] for w in words),
            min(w[1] for w in words),
            max(w[2] for w in words),
            max(w[3] for w in words),
            " ".join(w[4].strip() for w in sorted(words)),
        )
        for words in lines.values()
    ]


@functools.cache
def _tesseract_installed_languages(binary: str) -> frozenset[str]:
    try:
        completed = subprocess.run(
            [binary, "--list-langs"], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    lines = completed.stdout.decode("utf-8", errors="replace").splitlines()
    return frozenset(line.strip() for line in lines[1:] if line.strip() and " " not in line)


def rapidocr_available() -> bool:
    """True when the ``rapidocr`` package (and its bundled models) is installed."""
    return importlib.util.find_spec("rapidocr") is not None


def tesseract_binary() -> str | None:
    """Path of the ``tesseract`` program, or None when it is not installed."""
    return shutil.which("tesseract")


@functools.cache
def _rapidocr() -> RapidOcrEngine:
    return RapidOcrEngine()  # loading the models takes a second or two: once per process


def _tesseract(options: OcrOptions, binary: str) -> OcrEngine | NoEngine:
    installed = _tesseract_installed_languages(binary)
    wanted = [TESSERACT_LANGUAGES.get(code, code) for code in options.languages]
    languages = [code for code in wanted if code in installed]
    if not languages:
        if not installed:
            return NoEngine("Tesseract has no language data installed")
        fallback = "eng" if "eng" in installed else sorted(installed)[0]
        languages = [fallback]
    # One slow page may take several times the average budget; the sandbox timeout is the cap.
    return TesseractEngine(binary, languages, timeout_seconds=max(4 * options.page_seconds, 60.0))


def select_engine(options: OcrOptions) -> OcrEngine | NoEngine:
    """The engine ``options.engine`` names, resolved.

    ``auto``: RapidOCR, unless a language hint is one its bundled model does not read
    (Cyrillic, Greek, Arabic…) and Tesseract is installed; else whichever is installed.
    """
    if options.engine == "off":
        return NoEngine("text recognition (OCR) is turned off (SHORTLIST_OCR__ENGINE=off)")
    uncovered = set(options.languages) - RAPIDOCR_LANGUAGES
    if options.engine == "auto" and uncovered and tesseract_binary() is not None:
        return select_engine(dataclasses.replace(options, engine="tesseract"))
    if options.engine in ("auto", "rapidocr") and rapidocr_available():
        try:
            return _rapidocr()
        except (OSError, RuntimeError, ValueError) as exc:
            return NoEngine(f"the OCR engine RapidOCR could not start ({exc})")
    binary = tesseract_binary()
    if options.engine in ("auto", "tesseract") and binary is not None:
        return _tesseract(options, binary)
    if options.engine == "rapidocr":
        return NoEngine("the OCR engine RapidOCR is not installed (pip install rapidocr)")
    if options.engine == "tesseract":
        return NoEngine("the OCR engine Tesseract is not installed (apt-get install tesseract-ocr)")
    return NoEngine("no OCR engine is installed (pip install rapidocr)")


# --- reading order ---------------------------------------------------------------------------


def layout_text(boxes: Sequence[TextBox]) -> str:
    """Recognised boxes as paragraphs in reading order.

    A recursive XY cut: the widest empty gap splits the boxes, across the page
    (between paragraphs) or down it (between columns, at least
    :data:`COLUMN_GAP` line heights wide, and preferred only when twice as wide as
    the widest gap across); boxes that overlap form lines, read
    left to right. Neighbouring lines of one column join into a paragraph; words
    hyphenated across lines are joined again.
    """
    boxes = [box for box in boxes if box.text.strip()]
    if not boxes:
        return ""
    height = statistics.median(box.y1 - box.y0 for box in boxes) or 1.0
    blocks = _xy_cut(boxes, height)
    paragraphs: list[list[str]] = []
    previous: _Block | None = None
    for block in blocks:
        if previous is not None and _continues(previous, block, height):
            paragraphs[-1].extend(block.lines)
        else:
            paragraphs.append(list(block.lines))
        previous = block
    return "\n\n".join(_join_lines(lines) for lines in paragraphs)


@dataclass
class _Block:
    x0: float
    y0: float
    x1: float
    y1: float
    lines: list[str] = field(default_factory=list)


def _xy_cut(boxes: list[TextBox], height: float) -> list[_Block]:
    if len(boxes) > 1:
        y_gap, y_groups = _split(boxes, vertical=True)
        x_gap, x_groups = _split(boxes, vertical=False)
        if x_gap < COLUMN_GAP * height:
            x_gap, x_groups = max((x_gap, x_groups), _column_gap(boxes), key=lambda cut: cut[0])
        use_x = x_gap >= COLUMN_GAP * height and x_gap / 2 > y_gap
        groups = x_groups if use_x else y_groups
        if len(groups) > 1 and (use_x or y_gap > 0):
            return [block for group in groups for block in _xy_cut(group, height)]
    return [_leaf(boxes)]


def _split(boxes: list[TextBox], *, vertical: bool) -> tuple[float, list[list[TextBox]]]:
    """The widest gap along one axis (0 when none), and the boxes split at every gap that wide."""

    def span(box: TextBox) -> tuple[float, float]:
        return (box.y0, box.y1) if vertical else (box.x0, box.x1)

    ordered = sorted(boxes, key=span)
    gaps: list[tuple[int, float]] = []
    reach = span(ordered[0])[1]
    for index in range(1, len(ordered)):
        start, end = span(ordered[index])
        if start > reach:
            gaps.append((index, start - reach))
        reach = max(reach, end)
    if not gaps:
        return 0.0, [boxes]
    widest = max(gap for _, gap in gaps)
    cuts = [index for index, gap in gaps if gap >= widest * 0.999]
    groups = [ordered[a:b] for a, b in zip([0, *cuts], [*cuts, len(ordered)], strict=True)]
    return widest, groups


def _column_gap(boxes: list[TextBox]) -> tuple[float, list[list[TextBox]]]:
    """The widest vertical strip crossed by at most 1 in :data:`STRADDLERS` boxes, and the
    boxes split at its middle (by their centres): a gutter a long line juts into."""
    allowed = len(boxes) // STRADDLERS
    if allowed == 0:
        return 0.0, [boxes]
    events = sorted([(box.x0, 1) for box in boxes] + [(box.x1, -1) for box in boxes])
    best, best_at, covered, opened = 0.0, 0.0, 0, None
    for position, change in events:
        if opened is not None and covered + change > allowed:
            if position - opened > best:
                best, best_at = position - opened, (opened + position) / 2
            opened = None
        covered += change
        if covered <= allowed and opened is None and covered > 0:
            opened = position
    left = [box for box in boxes if (box.x0 + box.x1) / 2 < best_at]
    right = [box for box in boxes if (box.x0 + box.x1) / 2 >= best_at]
    if not left or not right:
        return 0.0, [boxes]
    return best, [left, right]


def _leaf(boxes: list[TextBox]) -> _Block:
    """Boxes with no clean gap between them: grouped into lines by vertical overlap."""
    lines: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: (b.y0 + b.y1) / 2):
        centre = (box.y0 + box.y1) / 2
        if lines and lines[-1][-1].y0 <= centre <= max(b.y1 for b in lines[-1]):
            lines[-1].append(box)
        else:
            lines.append([box])
    return _Block(
        min(b.x0 for b in boxes),
        min(b.y0 for b in boxes),
        max(b.x1 for b in boxes),
        max(b.y1 for b in boxes),
        [" ".join(b.text for b in sorted(line, key=lambda b: b.x0)) for line in lines],
    )


def _continues(previous: _Block, block: _Block, height: float) -> bool:
    """True when ``block`` is the next line(s) of ``previous``'s paragraph."""
    overlap = min(previous.x1, block.x1) - max(previous.x0, block.x0)
    return 0 <= block.y0 - previous.y1 < 0.8 * height and overlap > 0


def _join_lines(lines: list[str]) -> str:
    text = ""
    for line in lines:
        if text.endswith("-") and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text


# --- recognising a document's pages ----------------------------------------------------------


@dataclass
class OcrResult:
    """What recognition made of the pages it was asked to read (0-based page indexes)."""

    engine: str | None = None
    unavailable: str | None = None
    """Why no engine read anything (OCR off, or no engine installed)."""
    texts: dict[int, str] = field(default_factory=dict)
    illegible: list[int] = field(default_factory=list)
    over_page_budget: list[int] = field(default_factory=list)
    over_time_budget: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    first_failure: str = ""
    max_pages: int = 0
    seconds: float = 0.0

    @classmethod
    def combined(cls, results: Sequence[OcrResult]) -> OcrResult:
        """One result for a document whose parts each recognised their own pages."""
        merged = cls(max_pages=max((result.max_pages for result in results), default=0))
        for result in results:
            merged.engine = merged.engine or result.engine
            merged.unavailable = merged.unavailable or result.unavailable
            merged.texts.update(result.texts)
            merged.illegible.extend(result.illegible)
            merged.over_page_budget.extend(result.over_page_budget)
            merged.over_time_budget.extend(result.over_time_budget)
            merged.failed.extend(result.failed)
            merged.first_failure = merged.first_failure or result.first_failure
            merged.seconds += result.seconds
        return merged

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> OcrResult:
        """Rebuild a result from :func:`dataclasses.asdict` output sent as JSON.

        Raises:
            KeyError, TypeError, ValueError: the payload is malformed.
        """

        def indexes(name: str) -> list[int]:
            return [int(index) for index in payload[name]]

        return cls(
            engine=None if payload["engine"] is None else str(payload["engine"]),
            unavailable=None if payload["unavailable"] is None else str(payload["unavailable"]),
            texts={int(index): str(text) for index, text in payload["texts"].items()},
            illegible=indexes("illegible"),
            over_page_budget=indexes("over_page_budget"),
            over_time_budget=indexes("over_time_budget"),
            failed=indexes("failed"),
            first_failure=str(payload["first_failure"]),
            max_pages=int(payload["max_pages"]),
            seconds=float(payload["seconds"]),
        )

    @property
    def recognised_pages(self) -> tuple[int, ...]:
        """1-based numbers of the pages whose text came from recognition."""
        return tuple(sorted(index + 1 for index in self.texts))

    @property
    def left_out(self) -> list[int]:
        """Pages not read for lack of budget (not a verdict on the page)."""
        return sorted(self.over_page_budget + self.over_time_budget)

    def warnings(self) -> list[str]:
        notes: list[str] = []
        if self.texts:
            notes.append(
                f"Text recognised from images (OCR, {self.engine}) on page "
                f"{page_ranges(self.recognised_pages)}; it may contain recognition errors"
            )
        if self.over_page_budget:
            notes.append(
                f"Page {_ranges(self.over_page_budget)} not recognised: the OCR budget of "
                f"{self.max_pages} pages per document was used up (SHORTLIST_OCR__MAX_PAGES)"
            )
        if self.over_time_budget:
            notes.append(
                f"Page {_ranges(self.over_time_budget)} not recognised: the OCR time budget of "
                f"{self.seconds:.0f} s was used up (SHORTLIST_OCR__PAGE_SECONDS, "
                "SHORTLIST_EXTRACTION__TIMEOUT_SECONDS)"
            )
        if self.failed:
            notes.append(
                f"Text recognition failed on page {_ranges(self.failed)} ({self.first_failure})"
            )
        return notes


def _ranges(indexes: Sequence[int]) -> str:
    return page_ranges([index + 1 for index in sorted(indexes)])


def ocr_deadline(started: float, limits: ExtractionLimits) -> float:
    """The latest time recognition may start a page, for an extraction begun at ``started``."""
    return started + limits.timeout_seconds * OCR_TIMEOUT_SHARE


def recognise_pages(
    render: Callable[[int], PageImage],
    pages: Sequence[int],
    options: OcrOptions,
    *,
    deadline: float,
    clock: Callable[[], float],
    engine: OcrEngine | NoEngine | None = None,
    on_recognised: Callable[[int], None] | None = None,
) -> OcrResult:
    """Recognise ``pages`` (0-based) in order, within the budget; ``render`` draws one;
    ``on_recognised`` is told each page whose text was read, as soon as it is.

    The engine (``select_engine(options)`` unless given) loads only when there is
    a page to read. A page starts only while its expected time (the slowest page
    so far) still fits before the earlier of ``deadline`` and ``page_seconds`` per
    page of ``pages`` from now. A page the engine fails on is reported, not fatal.
    """
    result = OcrResult(max_pages=options.max_pages)
    if not pages:
        return result
    chosen = engine if engine is not None else select_engine(options)
    if isinstance(chosen, NoEngine):
        result.unavailable = chosen.reason
        return result
    result.engine = chosen.name
    started = clock()
    budget_end = min(deadline, started + options.page_seconds * len(pages))
    result.seconds = max(budget_end - started, 0.0)
    slowest = 0.0
    for position, index in enumerate(pages):
        if position >= options.max_pages:
            result.over_page_budget.append(index)
            continue
        now = clock()
        if now + slowest > budget_end:
            result.over_time_budget.append(index)
            continue
        try:
            image = render(index)
            text = "" if image.is_blank() else layout_text(chosen.recognise(image))
        except MemoryError:
            raise
        except Exception as exc:
            result.failed.append(index)
            result.first_failure = result.first_failure or (str(exc) or type(exc).__name__)
            continue
        finally:
            slowest = max(slowest, clock() - now)
        if sum(1 for char in text if char.isalnum()) >= MIN_RECOGNISED_CHARS:
            result.texts[index] = text
            if on_recognised is not None:
                on_recognised(index)
        else:
            result.illegible.append(index)
    return result
