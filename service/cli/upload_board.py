"""What `shortlist upload` shows while files are sent and extracted: one line per file.

Several files are in flight at once, so a single progress bar no longer fits. On a
terminal the board redraws the lines of the files in flight in place (``sending 45%``,
``extracting, page 12/40``) under a count of those still queued, and prints each file's
line for good once it settles (``ready, 40 pages``), so a folder of hundreds of files
never draws more lines than are in flight. Anywhere else (a pipe, a CI log) it prints a
line each time a file's state or page count changes, so a log tells the same story
without control characters. Safe to update from the threads that send the files: the
state changes under a lock, and the text they produce is written after it is released (by
whichever thread finds the terminal free, in order), so a slow terminal never holds up
another file's thread.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Literal

Phase = Literal["queued", "sending", "extracting", "ready", "error"]

REDRAW_INTERVAL_SECONDS = 0.1
"""Least time between two redraws of a live board for byte counts (state changes redraw at once)."""


@dataclass
class FileLine:
    """One file's state on the board."""

    name: str
    phase: Phase = "queued"
    size: int = 0
    sent: int = 0
    pages_done: int | None = None
    page_count: int | None = None
    message: str = ""

    def text(self) -> str:
        """The state in words, without the name."""
        if self.phase == "sending":
            share = self.sent / self.size if self.size else 1.0
            return f"sending {min(share, 1.0):.0%}"
        if self.phase == "extracting":
            if self.pages_done is None or self.page_count is None:
                return "extracting"
            return f"extracting, page {self.pages_done}/{self.page_count}"
        if self.phase == "ready":
            pages = self.page_count
            return "ready" if pages is None else f"ready, {pages} page{'s' if pages != 1 else ''}"
        if self.phase == "error":
            return f"error — {self.message}" if self.message else "error"
        return "queued"

    @property
    def settled(self) -> bool:
        return self.phase in ("ready", "error")

    def milestone(self) -> tuple[Phase, int | None]:
        """What a log line is printed for: a new phase, or a new page count while extracting."""
        return self.phase, self.pages_done


class UploadBoard:
    """The lines of the files of one `shortlist upload`, drawn on ``stream``."""

    def __init__(self, names: list[str], stream: IO[str], *, live: bool) -> None:
        self._lines = [FileLine(name) for name in names]
        self._stream = stream
        self._live = live
        self._lock = threading.Lock()
        """Guards the lines and what is due to be written; never held while writing."""
        self._writing = threading.Lock()
        """Held by the one thread writing to ``stream``."""
        self._due: list[str] = []
        """Text produced under the lock, in order, not yet written."""
        self._drawn = 0
        self._last_draw = 0.0
        self._settled: list[int] = []
        """Files settled since the last redraw, to print for good above the board."""
        self._printed: list[tuple[Phase, int | None] | None] = [None] * len(names)
        self._width = max((len(name) for name in names), default=0)

    def sending(self, index: int, size: int) -> None:
        self._change(index, phase="sending", size=size, sent=0)

    def sent(self, index: int, count: int) -> None:
        """``count`` more bytes of file ``index`` are out."""
        with self._lock:
            line = self._lines[index]
            line.sent += count
            self._show(index, urgent=False)
        self._write_due()

    def extracting(self, index: int) -> None:
        self._change(index, phase="extracting")

    def document(self, index: int, document: dict[str, Any]) -> None:
        """Show what the service says of the document: its progress, or how it settled."""
        status = document.get("status")
        if status == "ready":
            self._change(index, phase="ready", page_count=document.get("page_count"))
        elif status == "error":
            problem = document.get("error") or {}
            self._change(index, phase="error", message=str(problem.get("message", "")))
        else:
            progress = document.get("progress") or {}
            self._change(
                index,
                phase="extracting",
                pages_done=progress.get("pages_done"),
                page_count=progress.get("page_count"),
            )

    def failed(self, index: int, message: str) -> None:
        self._change(index, phase="error", message=message)

    def close(self) -> None:
        """Draw the final state (a live board leaves its lines in place); returns once all
        of it is written."""
        with self._lock:
            if self._live:
                self._redraw()
        with self._writing:
            self._write_due_holding_the_stream()

    def _change(self, index: int, **changes: Any) -> None:
        with self._lock:
            line = self._lines[index]
            before = (line.settled, line.text())
            for name, value in changes.items():
                setattr(line, name, value)
            if (line.settled, line.text()) == before:
                return  # a poll that found nothing new
            if line.settled and not before[0]:
                self._settled.append(index)
            self._show(index, urgent=True)
        self._write_due()

    def _write_due(self) -> None:
        """Write what is due unless another thread is writing: that one writes it too.

        After letting go of the stream, look again: text that became due while this thread
        wrote, from a thread that found the stream taken, is this thread's to write.
        """
        while self._writing.acquire(blocking=False):
            try:
                self._write_due_holding_the_stream()
            finally:
                self._writing.release()
            with self._lock:
                if not self._due:
                    return

    def _write_due_holding_the_stream(self) -> None:
        while True:
            with self._lock:
                text, self._due = "".join(self._due), []
            if not text:
                return
            self._stream.write(text)
            self._stream.flush()

    def _show(self, index: int, *, urgent: bool) -> None:
        if self._live:
            now = time.monotonic()
            if urgent or now - self._last_draw >= REDRAW_INTERVAL_SECONDS:
                self._redraw()
                self._last_draw = now
            return
        line = self._lines[index]
        if line.milestone() != self._printed[index]:
            self._printed[index] = line.milestone()
            self._due.append(f"{line.name}: {line.text()}\n")

    def _redraw(self) -> None:
        """Queue a redraw of the board (the caller holds the lock)."""
        if self._drawn:
            # Back to the board's first line, and clear it and everything under it.
            self._due.append(f"\x1b[{self._drawn}F\x1b[J")
        for index in self._settled:
            self._due.append(self._row(self._lines[index]))
        self._settled.clear()
        in_flight = [line for line in self._lines if line.phase in ("sending", "extracting")]
        for line in in_flight:
            self._due.append(self._row(line))
        queued = sum(1 for line in self._lines if line.phase == "queued")
        if queued:
            self._due.append(f"{queued} queued\n")
        self._drawn = len(in_flight) + (1 if queued else 0)

    def _row(self, line: FileLine) -> str:
        return f"{line.name:<{self._width}}  {line.text()}\n"
