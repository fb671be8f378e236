"""Extraction in child processes, so a hostile document cannot harm the caller.

The parent runs ``python -m extract.sandbox_child`` in a new session (its own process
group). Each request is one JSON header line (with the byte count) plus the raw
bytes on the child's stdin; the child answers with JSON lines on its stdout:
optional ``{"progress": [pages_done, pages]}`` lines, then one answer. The child caps its
own address space (``RLIMIT_AS``) before it reads any document. The parent kills
the whole process group on timeout. Answers are JSON, never pickle: the parent
must not run code chosen by a process that parsed untrusted input.

Outcomes in the parent: the child's typed error is re-raised as the same
type; timeout -> :class:`ExtractionTimeout`; the child running out of memory
-> :class:`DocumentTooLargeError`; any other death -> :class:`CorruptDocumentError`.
Safe to call from worker threads (each request owns its child while it runs).

:func:`extract_in_sandbox` starts one child for one document. :class:`SandboxPool`
is what a worker uses:

* Small Markdown, text, CSV/TSV and HTML files (``in_process_max_bytes``) are
  parsed in the calling process: their parsers are pure Python, bounded by the
  size and by :func:`extract.extract_document`'s error translation.
* PDFs go to long-lived children with the PDF libraries and the layout model
  loaded; a child serves up to ``documents_per_child`` requests, then is replaced.
  A PDF of at least ``split_min_pages`` pages is extracted as parts of
  ``pages_per_part`` pages, ``workers`` children at a time (see
  :mod:`extract.pdf_ranges`); each part has ``limits.timeout_seconds``, the whole
  document ``limits.timeout_ceiling_seconds``. A part whose child dies, runs out
  of memory or time is read again as plain text, and the warning names its pages.
* Office files, and larger text files, get a fresh child each.
* A page image (:meth:`SandboxPool.render`) is drawn by a pooled child, under the same caps.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from extract.detect import declared_kind, detect_kind
from extract.document import check_size, extract_document
from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionError,
    ExtractionTimeout,
    error_from_payload,
)
from extract.page_render import RenderedPage, RenderRequest
from extract.pdf import PdfPart, join_pdf_parts
from extract.pdf_ranges import (
    IN_PROCESS_KINDS,
    PAGES_PER_PART,
    SPLIT_MIN_PAGES,
    default_workers,
    part_limits,
    part_ranges,
)
from extract.types import Extraction, ExtractionLimits, Progress
from extract.wire import from_wire, to_wire

DOCUMENTS_PER_CHILD = 50
"""Requests a pooled child serves before it is replaced, by default."""
IN_PROCESS_MAX_BYTES = 1024 * 1024
"""Small text files up to this size are read in the worker's own process, by default."""

_OUT_OF_MEMORY_SIGNS = ("MemoryError", "out of memory", "Cannot allocate memory", "bad_alloc")
_STDERR_TAIL = 2000


def _child_environment() -> dict[str, str]:
    environment = dict(os.environ)
    # One inference thread: less address space reserved under RLIMIT_AS, and
    # parallel sandboxes do not oversubscribe the CPUs.
    environment.setdefault("OMP_NUM_THREADS", "1")
    return environment


def too_large(limits: ExtractionLimits) -> DocumentTooLargeError:
    return DocumentTooLargeError(
        f"Reading this document needs more than the {limits.memory_mb} MB of memory allowed; "
        "split it or upload a smaller file"
    )


def timed_out(seconds: float) -> ExtractionTimeout:
    return ExtractionTimeout(
        f"Reading this document took longer than {seconds:g} s and was stopped; try a smaller file"
    )


class _Child:
    """One sandbox child process and the requests it serves, one at a time."""

    def __init__(self, *, warm_memory_mb: int | None = None) -> None:
        warm = ["--warm", str(warm_memory_mb)] if warm_memory_mb is not None else []
        self.memory_mb = warm_memory_mb
        self.served = 0
        self.process = subprocess.Popen(
            [sys.executable, "-m", "extract.sandbox_child", *warm],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=_child_environment(),
        )
        self._stderr: collections.deque[bytes] = collections.deque(maxlen=64)
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()
        self._pending = b""

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            descriptor = stream.fileno()
            for chunk in iter(lambda: os.read(descriptor, 4096), b""):
                self._stderr.append(chunk)

    def request(
        self,
        header: dict[str, Any],
        data: bytes,
        limits: ExtractionLimits,
        timeout: float,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """Send one request; the child's answer (typed errors raised), within ``timeout``."""
        self.served += 1
        deadline = time.monotonic() + timeout
        line = json.dumps({**header, "size": len(data)}).encode() + b"\n"
        writer = threading.Thread(target=self._write, args=(line + data,), daemon=True)
        writer.start()
        try:
            answer = self._read_answer(deadline, progress)
        except TimeoutError:
            self.kill()
            raise timed_out(timeout) from None
        finally:
            writer.join(timeout=1)
        if answer is None:
            raise self._death(limits)
        if "error" in answer:
            raise error_from_payload(answer["error"])
        return answer

    def _write(self, payload: bytes) -> None:
        stream = self.process.stdin
        assert stream is not None
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            stream.write(payload)
            stream.flush()

    def _read_answer(self, deadline: float, progress: Progress | None) -> dict[str, Any] | None:
        stream = self.process.stdout
        assert stream is not None
        descriptor = stream.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(descriptor, selectors.EVENT_READ)
            while True:
                while b"\n" in self._pending:
                    line, self._pending = self._pending.split(b"\n", 1)
                    try:
                        message = json.loads(line)
                    except ValueError:
                        return None
                    if not isinstance(message, dict):
                        return None
                    if "progress" not in message:
                        return message
                    if progress is not None:
                        try:
                            done, pages = (int(number) for number in message["progress"])
                        except (TypeError, ValueError):
                            return None
                        progress(done, pages)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                if not selector.select(timeout=remaining):
                    continue
                chunk = os.read(descriptor, 1 << 20)
                if not chunk:
                    return None
                self._pending += chunk

    def _death(self, limits: ExtractionLimits) -> ExtractionError:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self.kill()
        return death_error(b"".join(self._stderr), self.process.returncode, limits)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self._stderr_reader.join(timeout=1)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        """Let the child exit (stdin closed), then make sure its process group is gone."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        self.kill()


def _field(answer: dict[str, Any], key: str) -> Any:
    """``answer[key]``, or the child answered something it should not have."""
    if key not in answer:
        raise CorruptDocumentError(f"The extractor answered without {key!r}")
    return answer[key]


def death_error(stderr: bytes, returncode: int | None, limits: ExtractionLimits) -> ExtractionError:
    """What a child that stopped without answering means, from its stderr and exit status."""
    tail = stderr.decode("utf-8", errors="replace")[-_STDERR_TAIL:]
    if any(sign in tail for sign in _OUT_OF_MEMORY_SIGNS):
        return too_large(limits)
    if returncode is None:
        how = "no answer"
    elif returncode < 0:
        how = f"signal {-returncode}"
    else:
        how = f"exit status {returncode}"
    last_line = tail.strip().splitlines()[-1] if tail.strip() else "no message"
    return CorruptDocumentError(
        f"The extractor stopped unexpectedly on this document ({how}: {last_line})"
    )


def _header(
    filename: str, content_type: str | None, limits: ExtractionLimits, op: str, **more: Any
) -> dict[str, Any]:
    return {
        "op": op,
        "filename": filename,
        "content_type": content_type,
        "limits": to_wire(limits),
        **more,
    }


def extract_in_sandbox(
    data: bytes,
    filename: str,
    content_type: str | None,
    *,
    limits: ExtractionLimits | None = None,
) -> Extraction:
    """Same as :func:`extract.extract_document`, but in one fresh child process.

    The child gets ``limits.memory_mb`` of address space and ``limits.timeout_seconds``
    of wall-clock time (including its start-up).

    Raises:
        ExtractionError: the child's typed error, or ExtractionTimeout,
            DocumentTooLargeError (memory) or CorruptDocumentError (the child died).
    """
    limits = limits or ExtractionLimits()
    check_size(data, limits)
    child = _Child()
    try:
        header = _header(filename, content_type, limits, "extract")
        answer = child.request(header, data, limits, limits.timeout_seconds)
    finally:
        child.close()
    return from_wire(_field(answer, "extraction"), Extraction, "text")


class SandboxPool:
    """Extraction for a worker: in-process for small text, long-lived PDF children, PDFs in parts.

    ``spares`` children are kept started ahead of time (capped at ``memory_mb``,
    PDF libraries loaded; about 500 MB each once they have read a PDF). A child
    goes back to the pool after each answer until it has served
    ``documents_per_child`` requests or answered an error. A PDF whose limits
    ask for another memory cap gets fresh children. Safe to share between threads.
    """

    def __init__(
        self,
        spares: int = 1,
        *,
        memory_mb: int = ExtractionLimits.memory_mb,
        workers: int | None = None,
        pages_per_part: int = PAGES_PER_PART,
        split_min_pages: int = SPLIT_MIN_PAGES,
        documents_per_child: int = DOCUMENTS_PER_CHILD,
        in_process_max_bytes: int = IN_PROCESS_MAX_BYTES,
    ) -> None:
        self.spares = spares
        self.memory_mb = memory_mb
        self.workers = max(1, workers or default_workers())
        self.pages_per_part = pages_per_part
        self.split_min_pages = split_min_pages
        self.documents_per_child = documents_per_child
        self.in_process_max_bytes = in_process_max_bytes
        self._ready: collections.deque[_Child] = collections.deque()
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def extract(
        self,
        data: bytes,
        filename: str,
        content_type: str | None,
        *,
        limits: ExtractionLimits | None = None,
        progress: Progress | None = None,
    ) -> Extraction:
        """Same as :func:`extract_in_sandbox`; ``progress(pages_done, page_count)`` is
        called (from any thread) as the pages of a PDF are read."""
        limits = limits or ExtractionLimits(memory_mb=self.memory_mb)
        check_size(data, limits)
        if self.reads_in_process(filename, content_type, len(data)):
            kind, _ = detect_kind(data, filename, content_type)  # the bytes decide
            if kind in IN_PROCESS_KINDS:
                return extract_document(data, filename, content_type, limits=limits)
        if declared_kind(filename, content_type) != "pdf":
            return extract_in_sandbox(data, filename, content_type, limits=limits)
        return self._extract_pdf(data, filename, content_type, limits, progress)

    def reads_in_process(self, filename: str, content_type: str | None, size: int) -> bool:
        """Whether a file of this name, declared type and size is read in the calling process
        (unless its bytes turn out to be of another kind): a small text, CSV or HTML file."""
        return (
            size <= self.in_process_max_bytes
            and declared_kind(filename, content_type) in IN_PROCESS_KINDS
        )

    def _extract_pdf(
        self,
        data: bytes,
        filename: str,
        content_type: str | None,
        limits: ExtractionLimits,
        progress: Progress | None,
    ) -> Extraction:
        started = time.monotonic()
        header = _header(
            filename, content_type, limits, "plan", split_min_pages=self.split_min_pages
        )
        answer = self._run(header, data, limits, limits.timeout_seconds, progress)
        self.warm()
        if "extraction" in answer:
            return from_wire(_field(answer, "extraction"), Extraction, "text")
        plan = _field(answer, "plan")
        page_count = int(plan["page_count"])
        left_out = [int(index) for index in plan["ocr_left_out"]]
        done: dict[int, int] = {}  # pages done per part (its first page); a retry never lowers it
        done_lock = threading.Lock()

        def read_part(pages: range) -> PdfPart:
            def on_progress(pages_done: int, _pages: int) -> None:
                # Told under the lock: parts finish pages in any order, and a total counted
                # before another part's must not be reported after it (it would step back).
                with done_lock:
                    done[pages.start] = max(done.get(pages.start, 0), pages_done)
                    if progress is not None:
                        progress(sum(done.values()), page_count)

            def attempt(**more: Any) -> PdfPart:
                remaining = started + limits.timeout_ceiling_seconds - time.monotonic()
                if remaining <= 0:
                    raise timed_out(limits.timeout_ceiling_seconds)
                timeout = min(limits.timeout_seconds, remaining)
                own = part_limits(limits, timeout)
                span = [pages.start, pages.stop]
                skipped = [index for index in left_out if index in pages]
                header = _header(
                    filename, content_type, own, "part", pages=span, ocr_left_out=skipped, **more
                )
                answer = self._run(header, data, own, timeout, on_progress)
                return from_wire(_field(answer, "part"), PdfPart, "part")

            try:
                return attempt()
            except (CorruptDocumentError, DocumentTooLargeError, ExtractionTimeout) as error:
                # Read the part again without layout analysis; the warning names its pages.
                return attempt(layout_failure=error.message)

        ranges = part_ranges(page_count, self.pages_per_part)
        threads = ThreadPoolExecutor(max_workers=min(self.workers, len(ranges)))
        try:
            parts = list(threads.map(read_part, ranges))
        finally:
            threads.shutdown(cancel_futures=True)  # after a failure, start no further part
        return join_pdf_parts(parts, limits, [str(warning) for warning in plan["warnings"]])

    def render(
        self, data: bytes, request: RenderRequest, *, limits: ExtractionLimits
    ) -> RenderedPage:
        """Draw one page of an original in a pooled child, within ``limits.memory_mb`` and
        ``limits.timeout_seconds`` (the child is killed after it).

        Raises:
            ExtractionError: the child's typed error (the page cannot be drawn), or
                ExtractionTimeout, DocumentTooLargeError (memory) or CorruptDocumentError
                (the child died).
        """
        header = _header("original", None, limits, "render", render=to_wire(request))
        answer = self._run(header, data, limits, limits.timeout_seconds)
        return from_wire(_field(answer, "rendered"), RenderedPage, "page image")

    def _run(
        self,
        header: dict[str, Any],
        data: bytes,
        limits: ExtractionLimits,
        timeout: float,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """One request to a pooled child (fresh when none fits); the child returns to the
        pool after a good answer."""
        child = self._take(limits.memory_mb) or _Child(warm_memory_mb=limits.memory_mb)
        try:
            answer = child.request(header, data, limits, timeout, progress)
        except BaseException:
            child.close()
            raise
        self._give_back(child)
        return answer

    def warm(self) -> None:
        """Start spares until ``spares`` are waiting (children that died are dropped)."""
        with self._lock:
            if self._closed:
                return
            for child in [c for c in self._ready if not c.alive()]:
                self._ready.remove(child)
                child.close()
            while len(self._ready) < self.spares:
                self._ready.append(_Child(warm_memory_mb=self.memory_mb))

    def spare_pids(self) -> list[int]:
        """Process ids of the children waiting now."""
        with self._lock:
            return [child.pid for child in self._ready if child.alive()]

    def close(self) -> None:
        """Stop the waiting children; later documents each get fresh children."""
        with self._lock:
            self._closed = True
            spares, self._ready = list(self._ready), collections.deque()
        for child in spares:
            child.close()

    def _take(self, memory_mb: int) -> _Child | None:
        with self._lock:
            for child in list(self._ready):
                if child.memory_mb != memory_mb:
                    continue
                self._ready.remove(child)
                if child.alive():
                    return child
                child.close()
        return None

    def _give_back(self, child: _Child) -> None:
        with self._lock:
            keep = (
                not self._closed
                and child.alive()
                and child.served < self.documents_per_child
                and child.memory_mb == self.memory_mb
                and len(self._ready) < max(self.spares, self.workers)
            )
            if keep:
                self._ready.append(child)
        if not keep:
            child.close()
