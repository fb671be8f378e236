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


def test_two_queues_in_one_process_keep_their_own_tasks(tmp_path: Path) -> None:
    """A task defers through the app that made it: two services in one process (tests do
    this) must not send one's jobs through the other's, possibly closed, connection."""
    first_settings = make_settings(
        "postgresql://nobody@127.0.0.1:1/one", tmp_path, jobs={"max_attempts": 2}
    )
    second_settings = make_settings(
        "postgresql://nobody@127.0.0.1:1/two", tmp_path, jobs={"max_attempts": 5}
    )
    first = Jobs(first_settings.database_url or "", first_settings)
    second = Jobs(second_settings.database_url or "", second_settings)

    first_task, second_task = first.app.tasks[EXTRACT_TASK], second.app.tasks[EXTRACT_TASK]

    assert first_task is not second_task
    assert first_task.blueprint is first.app
    assert second_task.blueprint is second.app
    assert first_task.retry_strategy is not None and second_task.retry_strategy is not None
    assert first_task.retry_strategy.max_attempts == 2
    assert second_task.retry_strategy.max_attempts == 5
