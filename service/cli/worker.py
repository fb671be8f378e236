"""``shortlist worker``: a standalone extraction worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

import click

from service.cli.plumbing import (
    main,
    run_with_runtime,
)
from service.runtime import Runtime
from service.settings import get_settings


@main.command()
@click.option("--name", default="shortlist-worker", show_default=True, help="Worker name in logs.")
def worker(name: str) -> None:
    """Run a standalone extraction worker (scale by running more of them)."""
    settings = get_settings()
    logging.getLogger("service").setLevel(settings.server.log_level.upper())
    logging.getLogger("procrastinate").setLevel(logging.INFO)

    async def work(runtime: Runtime) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        click.echo(f"Extraction worker {name!r} is running; stop it with Ctrl+C.")
        with contextlib.suppress(asyncio.CancelledError):
            await runtime.jobs.run_worker_forever(runtime, name=name)

    run_with_runtime(settings, work)
