"""A script run in a fresh interpreter, for what a process does once (start up, stop): an
earlier test in the same worker must not have done it already."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import REPO_DIR


def run_fresh(script: str, *args: str, timeout: float) -> str:
    """What ``python -c script args…`` printed, run from the repository root; the test fails
    with the end of its error output when it exits with another status than 0."""
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout
