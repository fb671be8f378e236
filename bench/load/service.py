"""The service under test: a scratch database, one API process, workers and users."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from bench.load.options import LoadOptions
from tests.deploy.processes import (
    HOST,
    ProcessFleet,
    clean_environment,
    free_port,
    wait_until_healthy,
)


class RunningService(NamedTuple):
    base_url: str
    db_url: str
    tokens: list[str]
    fleet: ProcessFleet


def logged_tracebacks(fleet: ProcessFleet) -> dict[str, int]:
    """Tracebacks each process logged: a failure the HTTP answers may have hidden
    (a job that crashed and was retried, an exception after the response)."""
    counts = {
        item.name: item.log_path.read_text(encoding="utf-8", errors="replace").count("Traceback")
        for item in fleet.processes
    }
    return {name: count for name, count in counts.items() if count}


@contextmanager
def scratch_database(server_url: str) -> Iterator[str]:
    """URL of a new empty database on the server ``server_url`` points at; dropped on exit."""
    name = f"shortlist_load_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    try:
        yield make_conninfo(server_url, dbname=name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))
            )


def s3_environment(stack: ExitStack) -> dict[str, str]:
    from tests.support.seaweed import run_seaweed_s3

    s3 = stack.enter_context(run_seaweed_s3("shortlist-load"))
    return {
        "SHORTLIST_STORAGE__BACKEND": "s3",
        "SHORTLIST_STORAGE__S3_ENDPOINT_URL": s3.endpoint_url,
        "SHORTLIST_STORAGE__S3_REGION": s3.region,
        "SHORTLIST_STORAGE__S3_BUCKET": s3.bucket,
        "SHORTLIST_STORAGE__S3_ACCESS_KEY_ID": s3.access_key_id,
        "SHORTLIST_STORAGE__S3_SECRET_ACCESS_KEY": s3.secret_access_key,
    }


@contextmanager
def running_service(options: LoadOptions) -> Iterator[RunningService]:
    """A fresh database, one API process, ``options.workers`` workers and some users."""
    with ExitStack() as stack:
        db_url = stack.enter_context(scratch_database(options.database_url))
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="shortlist-load-")))
        port = free_port()
        base_url = f"http://{HOST}:{port}"
        env = clean_environment(
            {
                "DATABASE_URL": db_url,
                "SHORTLIST_DATA_DIR": str(workdir / "data"),
                "SHORTLIST_SERVER__PUBLIC_URL": base_url,
                "SHORTLIST_SERVER__SEARCH_RATE_PER_MINUTE": "0",
                "SHORTLIST_SERVER__UPLOAD_RATE_PER_MINUTE": "0",
                "SHORTLIST_SERVER__LOG_LEVEL": "warning",
                "SHORTLIST_STORAGE__SIGNING_SECRET": uuid.uuid4().hex,
                "SHORTLIST_SEARCH__RERANKER": options.reranker,
                **(s3_environment(stack) if options.s3 else {}),
            }
        )
        fleet = stack.enter_context(ProcessFleet(workdir))
        tokens = [
            json.loads(fleet.run(["user", "create", f"load{n}", "--json"], env))["token"]
            for n in range(options.users)
        ]
        server = fleet.start(
            "serve", ["serve", "--host", HOST, "--port", str(port), "--no-worker"], env
        )
        for n in range(options.workers):
            fleet.start(f"worker{n}", ["worker", "--name", f"load-worker{n}"], env)
        wait_until_healthy(server, base_url, within=120.0)
        yield RunningService(base_url, db_url, tokens, fleet)
        died = [item.name for item in fleet.processes if item.process.poll() is not None]
        if died:
            raise AssertionError(f"processes died during the load: {died}")
