"""Which engine: the engine protocol, RapidOCR (models bundled in its wheel) and Tesseract (the
installed program), and :func:`select_engine`, which resolves ``auto | rapidocr | tesseract | off``."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from extract.ocr.page_image import PageImage
from extract.types import OcrOptions


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
