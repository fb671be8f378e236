"""Promise 5, nothing lost under load, against the real service in subprocesses.

Both tests run :mod:`bench.load` (one implementation): one API process, real
workers, real PostgreSQL, the local blob store, loopback clients mixing
searches, reads, three-step uploads and deletes. The short one keeps uploads
few and mostly text so it fits CI; the full 32 clients × 60 s run is ``slow``.
"""

from __future__ import annotations

import pytest

from bench.load import LoadOptions, LoadReport, format_report, run


def assert_nothing_lost(report: LoadReport) -> None:
    table = format_report(report, "pytest")
    result = report.audit
    assert report.server_errors == 0, table
    assert report.unexpected == 0, table
    assert report.unanswered == 0, table
    assert result.lost == [], table
    assert result.errors_without_reason == [], table
    assert result.extractable_errors == [], table
    assert result.hash_mismatches == [], table
    assert result.ready > 0, table
    assert report.tracebacks == {}, table


@pytest.mark.timeout(150)
def test_short_mixed_load_loses_no_upload_and_answers_no_5xx(server_url: str) -> None:
    report = run(
        LoadOptions(
            database_url=server_url,
            clients=8,
            seconds=10.0,
            workers=1,
            users=2,
            uploads_per_client=4,
            pdf_every=6,
            settle_seconds=60.0,
        )
    )
    print(format_report(report, "tests/reliability/load/test_load_short.py"))
    kinds = {sample.kind for sample in report.record.samples}
    assert kinds >= {"search", "list", "grant", "store", "register"}
    assert any(file.filename.endswith(".pdf") for file in report.record.accepted.values())
    assert_nothing_lost(report)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_full_load_of_32_clients_for_60_seconds_loses_nothing(server_url: str) -> None:
    report = run(LoadOptions(database_url=server_url, clients=32, seconds=60.0))
    print(format_report(report, "tests/reliability/load/test_load_short.py -m slow"))
    assert_nothing_lost(report)
