"""The report: what the service answered and how fast, and the audit, as Markdown tables."""

from __future__ import annotations

import os
import platform
from collections import Counter
from typing import NamedTuple

from bench.load.audit import Audit
from bench.load.clients import LoadRecord
from bench.load.options import LoadOptions

#: Request kinds in report order; an upload is three requests.
REQUEST_KINDS = ("search", "list", "get", "text", "grant", "store", "register", "delete")
#: What a correct service answers each kind in this workload (``text`` is 409 until ready).
EXPECTED_STATUSES: dict[str, frozenset[int]] = {
    "search": frozenset({200}),
    "list": frozenset({200}),
    "get": frozenset({200}),
    "text": frozenset({200, 409}),
    "grant": frozenset({201}),
    "store": frozenset({200, 201, 204}),
    "register": frozenset({201}),
    "delete": frozenset({204}),
}


class LoadReport(NamedTuple):
    options: LoadOptions
    record: LoadRecord
    audit: Audit
    load_average: tuple[float, float, float]
    tracebacks: dict[str, int]
    """Tracebacks in each service process's log, by process name (only those with any)."""

    @property
    def server_errors(self) -> int:
        return sum(1 for sample in self.record.samples if (sample.status or 0) >= 500)

    @property
    def unexpected(self) -> int:
        """Answers other than what a correct service gives this workload (5xx included)."""
        return sum(
            1
            for sample in self.record.samples
            if sample.status is not None and sample.status not in EXPECTED_STATUSES[sample.kind]
        )

    @property
    def unanswered(self) -> int:
        return sum(1 for sample in self.record.samples if sample.status is None)


def percentile_ms(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def format_report(report: LoadReport, command: str) -> str:
    record, result, options = report.record, report.audit, report.options
    lines = [
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()},"
        f" load average at the end {report.load_average[0]:.1f} (1 min) /"
        f" {report.load_average[1]:.1f} (5 min)  ",
        f"Service: 1 API process, {options.workers} worker(s), reranker {options.reranker},"
        f" blob store {'SeaweedFS S3' if options.s3 else 'local'}; {options.clients} clients"
        f" for {record.elapsed:.1f} s; {len(record.samples)} requests,"
        f" {len(record.samples) / max(record.elapsed, 1e-9):.1f} req/s\n",
        "| Kind | Requests | req/s | p50 ms | p95 ms | p99 ms | Statuses |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for kind in REQUEST_KINDS:
        samples = [sample for sample in record.samples if sample.kind == kind]
        if not samples:
            continue
        times = [sample.seconds for sample in samples]
        statuses = Counter(
            f"no answer ({s.failure.split(':')[0]})" if s.status is None else str(s.status)
            for s in samples
        )
        lines.append(
            f"| {kind} | {len(samples)} | {len(samples) / max(record.elapsed, 1e-9):.1f}"
            f" | {percentile_ms(times, 0.5):.0f} | {percentile_ms(times, 0.95):.0f}"
            f" | {percentile_ms(times, 0.99):.0f}"
            f" | {', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))} |"
        )
    codes = ", ".join(f"{code}: {count}" for code, count in sorted(result.error_codes.items()))
    lines += [
        "",
        "| Uploads accepted | Deleted by the test | Ready | Error (with reason)"
        " | Error though extractable | Lost | Hash mismatches | 5xx | Other unexpected | No answer"
        " | Settled after load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {result.accepted} | {result.deleted} | {result.ready}"
        f" | {result.error} ({result.error - len(result.errors_without_reason)})"
        f" | {len(result.extractable_errors)}"
        f" | {len(result.lost)} | {len(result.hash_mismatches)} | {report.server_errors}"
        f" | {report.unexpected - report.server_errors}"
        f" | {report.unanswered} | {result.settle_seconds:.1f} s |",
    ]
    kinds = Counter(file.filename.rsplit(".", 1)[-1] for file in record.accepted.values())
    lines.append(
        "\nAccepted uploads by type: "
        + ", ".join(f"{kind}: {count}" for kind, count in sorted(kinds.items()))
    )
    if codes:
        lines.append(f"\nError codes of uploads that ended in error: {codes}")
    failures = Counter(f"{s.kind}: {s.failure}" for s in record.samples if s.status is None)
    for failure, count in failures.most_common(5):
        lines.append(f"\nNo answer ×{count}: {failure}")
    logged = ", ".join(f"{name}: {count}" for name, count in sorted(report.tracebacks.items()))
    lines.append(f"\nTracebacks in the service logs: {logged or 'none'}")
    return "\n".join(lines)
