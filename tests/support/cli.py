"""Running the `shortlist` command as a user would: a child process with its own environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO_DIR


def cli_environment(db_url: str, data_dir: Path) -> dict[str, str]:
    """The environment of a `shortlist` run on ``db_url``: no reranker model, no spare
    extraction process, and no token unless the test sets one."""
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SHORTLIST_DATA_DIR": str(data_dir),
        "SHORTLIST_SEARCH__RERANKER": "none",
        "SHORTLIST_EXTRACTION__WARM_PROCESSES": "0",
    }
    env.pop("SHORTLIST_TOKEN", None)
    return env


def run_cli(
    env: dict[str, str], *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``shortlist ARGS…`` in ``env``, from the repository, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_DIR,
        timeout=timeout,
        check=False,
    )
