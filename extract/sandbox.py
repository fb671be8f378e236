"""Extraction in a throw-away child process, so a hostile document cannot harm the caller.

The parent runs ``python -m extract.sandbox_child`` in a new session (its own process
group), writes one JSON header line plus the raw bytes to its stdin, and reads
one JSON answer from its stdout. The child caps its own address space
(``RLIMIT_AS``) before it reads anything. The parent kills the whole process
group on timeout. Answers are JSON, never pickle: the parent must not run
code chosen by a process that parsed untrusted input.

Outcomes in the parent: the child's typed error is re-raised as the same
type; timeout -> :class:`ExtractionTimeout`; the child running out of memory
-> :class:`DocumentTooLargeError`; any other death -> :class:`CorruptDocumentError`.
Safe to call from worker threads (each call owns its child and pipes).

Starting a PDF child costs about a second (PyMuPDF and its layout model load on
import). :class:`SandboxPool` keeps children started ahead of time, PDF
libraries loaded, each waiting for one PDF; a child still serves exactly one
document and is never reused. A child exits without tearing down its
interpreter once its answer is out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import Any

from extract.detect import declared_kind
from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionTimeout,
    error_from_payload,
)
from extract.types import KINDS, Extraction, ExtractionLimits

_OUT_OF_MEMORY_SIGNS = ("MemoryError", "out of memory", "Cannot allocate memory", "bad_alloc")
_STDERR_TAIL = 2000


def _child_environment() -> dict[str, str]:
    environment = dict(os.environ)
    # One inference thread: less address space reserved under RLIMIT_AS, and
    # parallel sandboxes do not oversubscribe the CPUs.
    environment.setdefault("OMP_NUM_THREADS", "1")
    return environment


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def too_large(limits: ExtractionLimits) -> DocumentTooLargeError:
    return DocumentTooLargeError(
        f"Reading this document needs more than the {limits.memory_mb} MB of memory allowed; "
        "split it or upload a smaller file"
    )


def _extraction_from_payload(payload: dict[str, Any]) -> Extraction:
    kind = payload["kind"]
    if kind not in KINDS:
        raise CorruptDocumentError(f"The extractor answered with an unknown kind {kind!r}")
    return Extraction(
        markdown=str(payload["markdown"]),
        page_count=int(payload["page_count"]),
        page_offsets=tuple(int(offset) for offset in payload["page_offsets"]),
        kind=kind,
        warnings=tuple(str(warning) for warning in payload["warnings"]),
        ocr_pages=tuple(int(page) for page in payload.get("ocr_pages", ())),
    )


def _read_answer(
    stdout: bytes, stderr: bytes, returncode: int, limits: ExtractionLimits
) -> Extraction:
    if returncode == 0:
        try:
            answer = json.loads(stdout)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and "error" in answer:
            raise error_from_payload(answer["error"])
        if isinstance(answer, dict) and "extraction" in answer:
            return _extraction_from_payload(answer["extraction"])
    tail = stderr.decode("utf-8", errors="replace")[-_STDERR_TAIL:]
    if any(sign in tail for sign in _OUT_OF_MEMORY_SIGNS):
        raise too_large(limits)
    how = f"signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
    last_line = tail.strip().splitlines()[-1] if tail.strip() else "no message"
    raise CorruptDocumentError(
        f"The extractor stopped unexpectedly on this document ({how}: {last_line})"
    )


def extract_in_sandbox(
    data: bytes,
    filename: str,
    content_type: str | None,
    *,
    limits: ExtractionLimits | None = None,
) -> Extraction:
    """Same as :func:`extract.extract_document`, but in a fresh child process.

    The child gets ``limits.memory_mb`` of address space and ``limits.timeout_seconds``
    of wall-clock time (including its start-up).

    Raises:
        ExtractionError: the child's typed error, or ExtractionTimeout,
            DocumentTooLargeError (memory) or CorruptDocumentError (the child died).
    """
    limits = limits or ExtractionLimits()
    _check_size(data, limits)
    return _extract_in(_start_child(), data, filename, content_type, limits)


class SandboxPool:
    """:func:`extract_in_sandbox` with up to ``spares`` children started ahead of time.

    A spare caps its memory at ``memory_mb``, imports the PDF libraries, then
    waits for its one document; when it is taken, a replacement starts at once,
    loading while the document is read. Spares go to PDFs only: other kinds start
    fast, and would pay for loading libraries they do not use. A PDF whose limits
    ask for another memory cap, or that finds no spare, gets a fresh child. The
    timeout runs from when the document is handed over. A waiting spare holds
    about 150 MB of memory. Safe to share between threads.
    """

    def __init__(self, spares: int = 1, *, memory_mb: int = ExtractionLimits.memory_mb) -> None:
        self.spares = spares
        self.memory_mb = memory_mb
        self._ready: deque[subprocess.Popen[bytes]] = deque()
        self._lock = threading.Lock()
        self._closed = False

    def extract(
        self,
        data: bytes,
        filename: str,
        content_type: str | None,
        *,
        limits: ExtractionLimits | None = None,
    ) -> Extraction:
        """Same as :func:`extract_in_sandbox`."""
        limits = limits or ExtractionLimits(memory_mb=self.memory_mb)
        _check_size(data, limits)
        process = None
        # The child still checks the bytes; a spare just has the PDF libraries loaded.
        pdf = declared_kind(filename, content_type) == "pdf"
        if limits.memory_mb == self.memory_mb and pdf:
            process = self._take()
            self.warm()
        return _extract_in(process or _start_child(), data, filename, content_type, limits)

    def warm(self) -> None:
        """Start spares until ``spares`` are waiting (children that died are dropped)."""
        with self._lock:
            if self._closed:
                return
            for process in [p for p in self._ready if p.poll() is not None]:
                self._ready.remove(process)
                process.communicate()
            while len(self._ready) < self.spares:
                self._ready.append(_start_child(warm_memory_mb=self.memory_mb))

    def spare_pids(self) -> list[int]:
        """Process ids of the spares waiting now."""
        with self._lock:
            return [process.pid for process in self._ready if process.poll() is None]

    def close(self) -> None:
        """Stop the spares; later documents each get a fresh child."""
        with self._lock:
            self._closed = True
            spares, self._ready = list(self._ready), deque()
        for process in spares:
            _kill_group(process)
            process.communicate()

    def _take(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            while self._ready:
                process = self._ready.popleft()
                if process.poll() is None:
                    return process
                process.communicate()
        return None


def _check_size(data: bytes, limits: ExtractionLimits) -> None:
    if len(data) > limits.max_bytes:
        raise DocumentTooLargeError(
            f"The file is {len(data) / 2**20:.1f} MB, more than the "
            f"{limits.max_bytes / 2**20:.0f} MB allowed"
        )


def _start_child(*, warm_memory_mb: int | None = None) -> subprocess.Popen[bytes]:
    """A child waiting for its document on stdin; with ``warm_memory_mb`` it caps its
    memory at that and loads the PDF libraries first."""
    warm = ["--warm", str(warm_memory_mb)] if warm_memory_mb is not None else []
    return subprocess.Popen(
        [sys.executable, "-m", "extract.sandbox_child", *warm],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=_child_environment(),
    )


def _extract_in(
    process: subprocess.Popen[bytes],
    data: bytes,
    filename: str,
    content_type: str | None,
    limits: ExtractionLimits,
) -> Extraction:
    """Hand ``process`` its document and read its answer, within the limits."""
    header = json.dumps(
        {"filename": filename, "content_type": content_type, "limits": dataclasses.asdict(limits)}
    ).encode()
    try:
        stdout, stderr = process.communicate(header + b"\n" + data, timeout=limits.timeout_seconds)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.communicate()
        raise ExtractionTimeout(
            f"Reading this document took longer than {limits.timeout_seconds:g} s and was "
            "stopped; try a smaller file"
        ) from None
    finally:
        _kill_group(process)  # stray grandchildren, or an interrupted wait
        if process.poll() is None:
            process.wait()
    return _read_answer(stdout, stderr, process.returncode, limits)
