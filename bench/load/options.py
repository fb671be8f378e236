"""What one load run does: its options, and parsing them from the command line."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class LoadOptions:
    database_url: str
    clients: int = 32
    seconds: float = 60.0
    workers: int = 2
    reranker: str = "none"
    s3: bool = False
    users: int = 4
    pdf_every: int = 12
    """One upload in this many is a PDF (several seconds of extraction each); the rest are
    Markdown or plain text."""
    uploads_per_client: int = 20
    requests_per_client: int = 5000
    request_timeout: float = 30.0
    settle_seconds: float = 240.0
    seed: int = 8


def parse_args(argv: list[str] | None) -> LoadOptions:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description="Bounded loopback load test of the service."
    )
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--clients", type=int, default=32, help="Concurrent clients.")
    parser.add_argument("--seconds", type=float, default=60.0, help="Load duration.")
    parser.add_argument("--workers", type=int, default=2, help="`shortlist worker` processes.")
    parser.add_argument("--reranker", choices=("none", "local"), default="none")
    parser.add_argument("--s3", action="store_true", help="SeaweedFS S3 instead of local blobs.")
    parser.add_argument("--settle-seconds", type=float, default=240.0)
    args = parser.parse_args(argv)
    if not args.database_url:
        parser.error("set DATABASE_URL (or --database-url) to a PostgreSQL server")
    return LoadOptions(
        database_url=args.database_url,
        clients=args.clients,
        seconds=args.seconds,
        workers=args.workers,
        reranker=args.reranker,
        s3=args.s3,
        settle_seconds=args.settle_seconds,
    )
