"""One whole run (service up, load, audit) and the command-line entry point."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys

from bench.load.audit import audit
from bench.load.clients import run_clients
from bench.load.options import LoadOptions, parse_args
from bench.load.report import LoadReport, format_report
from bench.load.service import logged_tracebacks, running_service


def run(options: LoadOptions) -> LoadReport:
    """Start the service, load it, let uploads settle, audit them; everything stops by itself."""
    with running_service(options) as service:
        record = asyncio.run(run_clients(service.base_url, service.tokens, options))
        result = audit(
            service.db_url,
            service.base_url,
            service.tokens,
            record,
            options.settle_seconds,
        )
        tracebacks = logged_tracebacks(service.fleet)
    return LoadReport(options, record, result, os.getloadavg(), tracebacks)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    report = run(options)
    command = " ".join(["python -m bench.load", *map(shlex.quote, sys.argv[1:])])
    print(format_report(report, command))
    result = report.audit
    failed = (
        report.unexpected
        or report.unanswered
        or result.lost
        or result.errors_without_reason
        or result.hash_mismatches
        or result.extractable_errors
        or report.tracebacks
    )
    return 1 if failed else 0
