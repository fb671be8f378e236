"""Real ``shortlist`` processes for deployment tests, each in its own process group.

:class:`ProcessFleet` starts ``python -m service.cli …`` subprocesses with a
clean environment (no ``SHORTLIST_*`` or ``DATABASE_URL`` leaking in from the
developer's shell, and a working directory without a ``.env``), logs each one
to a file, and on exit stops every process group it started — SIGTERM, then
SIGKILL — however the test ended.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import httpx

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def clean_environment(overrides: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without Shortlist's own variables, plus ``overrides``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SHORTLIST_") and key not in ("DATABASE_URL", "COHERE_API_KEY")
    }
    env.update(overrides)
    return env


class ServiceProcess:
    """One running subprocess and the log it writes."""

    def __init__(self, name: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
        self.name = name
        self.process = process
        self.log_path = log_path

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the process group; SIGKILL it if it is still there after ``grace`` seconds."""
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        except ProcessLookupError:
            self.process.wait()


class ProcessFleet:
    """Starts ``shortlist`` subprocesses and guarantees they are all gone on exit."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.processes: list[ServiceProcess] = []

    def __enter__(self) -> ProcessFleet:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for item in reversed(self.processes):
            item.stop()

    def start(self, name: str, args: list[str], env: Mapping[str, str]) -> ServiceProcess:
        """Run ``python -m service.cli ARGS`` in the background, in a new session."""
        log_path = self.workdir / f"{name}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "service.cli", *args],
                cwd=self.workdir,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started = ServiceProcess(name, process, log_path)
        self.processes.append(started)
        return started

    def run(self, args: list[str], env: Mapping[str, str], timeout: float = 60.0) -> str:
        """Run ``python -m service.cli ARGS`` to completion and return its stdout."""
        done = subprocess.run(
            [sys.executable, "-m", "service.cli", *args],
            cwd=self.workdir,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"shortlist {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout.decode(errors='replace')}\n{done.stderr.decode(errors='replace')}"
            )
        return done.stdout.decode()


def wait_until_healthy(server: ServiceProcess, base_url: str, within: float = 60.0) -> None:
    """Poll ``GET /api/health`` until it answers 200; fail early if the process died."""
    deadline = time.monotonic() + within
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(
                f"{server.name} exited with {server.process.returncode} before it was healthy:\n"
                f"{server.log_tail()}"
            )
        try:
            response = httpx.get(f"{base_url}/api/health", timeout=2.0)
            if response.status_code == 200:
                return
            last = f"{response.status_code} {response.text[:200]}"
        except httpx.TransportError as exc:
            last = repr(exc)
        time.sleep(0.2)
    raise AssertionError(
        f"{server.name} was not healthy within {within:.0f} s (last: {last}):\n{server.log_tail()}"
    )
