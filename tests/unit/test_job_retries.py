"""The extraction queue's retries follow the settings."""

from __future__ import annotations

from pathlib import Path

import procrastinate

from service.jobs import EXTRACT_TASK, Jobs
from tests.conftest import make_settings


def test_retry_attempts_and_backoff_come_from_the_job_settings(tmp_path: Path) -> None:
    settings = make_settings(
        "postgresql://nobody@127.0.0.1:1/none",  # never connected to: the queue is not opened
        tmp_path,
        jobs={"max_attempts": 7, "retry_backoff_base": 3},
    )

    strategy = Jobs(settings.database_url or "", settings).app.tasks[EXTRACT_TASK].retry_strategy

    assert isinstance(strategy, procrastinate.RetryStrategy)
    assert strategy.max_attempts == 7
    assert strategy.exponential_wait == 3  # waits 3, 9, 27… s
