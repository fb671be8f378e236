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
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
from typing import Any

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
    if len(data) > limits.max_bytes:
        raise DocumentTooLargeError(
            f"The file is {len(data) / 2**20:.1f} MB, more than the "
            f"{limits.max_bytes / 2**20:.0f} MB allowed"
        )
    header = json.dumps(
        {"filename": filename, "content_type": content_type, "limits": dataclasses.asdict(limits)}
    ).encode()
    process = subprocess.Popen(
        [sys.executable, "-m", "extract.sandbox_child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=_child_environment(),
    )
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
