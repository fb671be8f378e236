"""WebVTT transcripts (``.vtt``): who said what, and when, as readable paragraphs.

Captions split one utterance over many short cues. Consecutive cues of the same speaker are
joined into one utterance until a sentence ends (or the speaker changes, or a pause longer
than ``PAUSE_SECONDS`` comes), and each utterance keeps the time it started:
``**[00:01:02] Ada:** text``. Voice tags (``<v Ada>``) name the speaker; other cue markup
(``<c>``, ``<i>``, inline timestamps) is dropped; a cue repeating the previous one's text (as
rolling auto-captions do) is skipped. ``NOTE``, ``STYLE`` and ``REGION`` blocks are not
spoken text. A transcript is one page.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

from extract.errors import CorruptDocumentError
from extract.markdown import assemble_pages
from extract.text import decode_text
from extract.types import Extraction

PAUSE_SECONDS = 3.0
_TIMING = re.compile(
    r"^\s*((?:\d+:)?\d{1,2}:\d{2}\.\d{3})\s+-->\s+((?:\d+:)?\d{1,2}:\d{2}\.\d{3})(?:\s.*)?$"
)
_VOICE = re.compile(r"<v(?:\.[^ >]*)?\s+([^>]+)>")
_TAG = re.compile(r"</?[^>]+>")
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*$")


class Cue(NamedTuple):
    start: float
    end: float
    speaker: str
    text: str


def extract_webvtt(data: bytes) -> Extraction:
    """The transcript's utterances, in order, as one page.

    Raises:
        CorruptDocumentError: without the ``WEBVTT`` header, or with no cue.
        EmptyDocumentError: when the cues hold no text.
    """
    text, _encoding = decode_text(data)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or not lines[0].lstrip("\ufeff").startswith("WEBVTT"):
        raise CorruptDocumentError("This is not a WebVTT file: it does not start with WEBVTT.")
    cues = _cues(lines[1:])
    if not cues:
        raise CorruptDocumentError("This WebVTT file has no cues (no 00:00.000 --> timings).")
    return assemble_pages(["\n\n".join(_utterances(cues))], "webvtt")


def _seconds(stamp: str) -> float:
    parts = [float(part) for part in stamp.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    hours, minutes, seconds = parts
    return hours * 3600 + minutes * 60 + seconds


def _cues(lines: list[str]) -> list[Cue]:
    cues: list[Cue] = []
    block: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            block.append(line)
            continue
        if block:
            cue = _cue(block)
            if cue is not None:
                cues.append(cue)
            block = []
    return cues


def _cue(block: list[str]) -> Cue | None:
    if block[0].startswith(("NOTE", "STYLE", "REGION")):
        return None
    timing_at = next((i for i, line in enumerate(block[:2]) if _TIMING.match(line)), None)
    if timing_at is None:
        return None
    match = _TIMING.match(block[timing_at])
    assert match is not None
    payload = " ".join(block[timing_at + 1 :])
    voice = _VOICE.search(payload)
    speaker = voice.group(1).strip() if voice else ""
    spoken = html.unescape(_TAG.sub("", payload))
    return Cue(_seconds(match[1]), _seconds(match[2]), speaker, " ".join(spoken.split()))


def _timestamp(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _utterances(cues: list[Cue]) -> list[str]:
    utterances: list[str] = []
    current: list[str] = []
    speaker = ""
    started = last_end = 0.0
    previous_text = ""

    def close() -> None:
        if current:
            who = f" {speaker}:" if speaker else ""
            utterances.append(f"**[{_timestamp(started)}]{who}** {' '.join(current)}")
            current.clear()

    for cue in cues:
        if not cue.text or cue.text == previous_text:
            continue
        previous_text = cue.text
        ended = bool(current) and _SENTENCE_END.search(current[-1]) is not None
        if current and (cue.speaker != speaker or ended or cue.start - last_end > PAUSE_SECONDS):
            close()
        if not current:
            speaker, started = cue.speaker, cue.start
        current.append(cue.text)
        last_end = cue.end
    close()
    return utterances
