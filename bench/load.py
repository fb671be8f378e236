"""Nothing lost under load: a bounded loopback load test of the real service.

Run from the repository root against a real PostgreSQL (a scratch database is
created on that server and dropped afterwards)::

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python -m bench.load --clients 32 --seconds 60

What it does, with the real ``shortlist`` command in subprocesses:

1. ``shortlist serve --no-worker`` on 127.0.0.1 (an ephemeral port) and
   ``--workers`` × ``shortlist worker``, sharing one data directory (the local
   blob store) or, with ``--s3``, a SeaweedFS S3 server on loopback;
2. ``shortlist user create --json`` for a few users; each client makes its own
   project through the REST API;
3. ``--clients`` concurrent clients, for ``--seconds``, each looping a weighted
   mix of searches, reads (document list, metadata, text), uploads through the
   three-step flow (grant → PUT or presigned POST to the store → register) of
   generated Markdown, text and small PDF files carrying a distinctive word,
   and deletes of their own documents; every request is timed and has a
   timeout, and each client stops by itself at the deadline or its request cap;
4. a bounded settle window, then the audit: every accepted upload the test did
   not delete must be ``ready`` or ``error`` with a reason (still ``pending`` or
   ``processing`` = lost), and each ready document's stored Markdown (read back
   through ``GET /api/documents/{id}/text``, and its ``content_hash`` in the
   database) must hash to the same sha256 as a fresh in-process
   ``extract.extract_document`` of the bytes that were uploaded. Every answer
   must be the one a correct service gives (no 5xx, no unexpected 4xx, no
   connection dropped), and no service process may log a traceback.

Prints Markdown tables; exits 1 when any check fails. Rate limits are switched
off: this measures capacity and durability, not abuse protection. The load
generator runs on the same cores as the server, so the figures are a floor for
a dedicated machine.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import random
import shlex
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from extract import ExtractionError, extract_document  # noqa: E402
from tests.deploy.processes import (  # noqa: E402
    HOST,
    ProcessFleet,
    clean_environment,
    free_port,
    wait_until_healthy,
)
from tests.integration.documents.conftest import make_pdf  # noqa: E402

#: How often each client picks each action (relative weights).
MIX: dict[str, int] = {"search": 40, "list": 12, "get": 12, "text": 12, "upload": 10, "delete": 8}
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
SETTLED = ("ready", "error")
#: Vocabulary of the generated files and of the searches that are not for a distinctive word.
WORDS = (
    *("membrane", "protein", "kinase", "receptor", "signalling", "pathway", "enzyme", "genome"),
    *("mutation", "phenotype", "cohort", "trial", "placebo", "dosage", "outcome", "survival"),
    *("regression", "variance", "estimator", "sampling", "neuron", "synapse", "cortex"),
    *("climate", "ocean", "carbon", "nitrogen", "soil", "erosion", "glacier", "sediment"),
    *("turbine", "voltage", "circuit", "antenna", "signal", "memory", "learning"),
)


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


class Sample(NamedTuple):
    kind: str
    status: int | None
    """HTTP status, or None when no answer came (timeout, connection error)."""
    seconds: float
    failure: str = ""
    """Why no answer came: the ``httpx`` exception's name."""


class UploadedFile(NamedTuple):
    document_id: str
    filename: str
    content_type: str
    data: bytes
    owner: int = 0
    """Index of the uploading user's token."""


@dataclass
class LoadRecord:
    samples: list[Sample] = field(default_factory=list)
    accepted: dict[str, UploadedFile] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    elapsed: float = 0.0


class Audit(NamedTuple):
    accepted: int
    deleted: int
    ready: int
    error: int
    lost: list[str]
    """Accepted, not deleted, and still pending/processing (or missing) after the settle window."""
    errors_without_reason: list[str]
    hash_mismatches: list[str]
    settle_seconds: float
    error_codes: Counter[str]
    extractable_errors: list[str]
    """Ended ``error`` although a fresh in-process extraction of the same bytes succeeds."""


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


# --- generated files ------------------------------------------------------------------------


def distinctive_word(client: int, number: int) -> str:
    return f"loadmark{client:03d}x{number:04d}"


def generated_file(rng: random.Random, client: int, number: int, pdf_every: int) -> UploadedFile:
    """A small file whose text carries a word found in no other upload; varied kind and size."""
    mark = distinctive_word(client, number)
    paragraphs = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
        for _ in range(rng.randint(1, 12))
    ]
    paragraphs.insert(rng.randrange(len(paragraphs) + 1), f"The {mark} sample {rng.random():.6f}.")
    if (client + number) % pdf_every == 0:
        pages = [" ".join(paragraphs[i::2]) for i in range(min(2, len(paragraphs)))]
        return UploadedFile("", f"{mark}.pdf", "application/pdf", make_pdf(pages))
    if rng.random() < 0.5:
        body = f"# Report {mark}\n\n" + "\n\n".join(
            f"## Part {n}\n\n{text}" for n, text in enumerate(paragraphs, 1)
        )
        return UploadedFile("", f"{mark}.md", "text/markdown", body.encode())
    return UploadedFile("", f"{mark}.txt", "text/plain", "\n\n".join(paragraphs).encode())


# --- one client -----------------------------------------------------------------------------


class Client:
    """One simulated user of a project: loops the weighted mix until its deadline."""

    def __init__(
        self,
        number: int,
        owner: int,
        http: httpx.AsyncClient,
        store: httpx.AsyncClient,
        project_id: str,
        options: LoadOptions,
        record: LoadRecord,
    ) -> None:
        self.number = number
        self.http = http
        self.store = store
        """No credentials: the grant itself authorises the bytes, as for a browser."""
        self.project_id = project_id
        self.options = options
        self.record = record
        self.owner = owner
        self.rng = random.Random(options.seed * 1000 + number)
        self.documents: list[str] = []
        self.uploads = 0
        self.deletes = 0
        self.requests = 0

    async def call(
        self,
        kind: str,
        method: str,
        url: str,
        *,
        via: httpx.AsyncClient | None = None,
        **kwargs: Any,
    ) -> httpx.Response | None:
        self.requests += 1
        started = time.perf_counter()
        try:
            response = await (via or self.http).request(method, url, **kwargs)
        except httpx.TransportError as exc:
            failure = f"{type(exc).__name__}: {exc} (client {self.number}, request {self.requests})"
            self.record.samples.append(Sample(kind, None, time.perf_counter() - started, failure))
            return None
        self.record.samples.append(
            Sample(kind, response.status_code, time.perf_counter() - started)
        )
        return response

    async def run(self, deadline: float) -> None:
        actions = list(MIX)
        weights = list(MIX.values())
        while time.monotonic() < deadline and self.requests < self.options.requests_per_client:
            action = self.rng.choices(actions, weights)[0]
            if action == "upload" and self.uploads < self.options.uploads_per_client:
                await self.upload()
            elif action == "delete" and self.documents and self.deletes * 2 < self.uploads:
                await self.delete(self.rng.choice(self.documents))
            elif action == "get" and self.documents:
                await self.get(self.rng.choice(self.documents))
            elif action == "text" and self.documents:
                await self.text(self.rng.choice(self.documents))
            elif action == "list":
                await self.call("list", "GET", f"/api/projects/{self.project_id}/documents")
            else:
                await self.search()

    async def search(self) -> None:
        if self.uploads and self.rng.random() < 0.5:
            query = distinctive_word(self.number, self.rng.randrange(self.uploads))
        else:
            query = " ".join(self.rng.sample(WORDS, 3))
        await self.call(
            "search", "POST", f"/api/projects/{self.project_id}/search", json={"query": query}
        )

    async def get(self, document_id: str) -> None:
        await self.call("get", "GET", f"/api/documents/{document_id}")

    async def text(self, document_id: str) -> None:
        await self.call("text", "GET", f"/api/documents/{document_id}/text")

    async def delete(self, document_id: str) -> None:
        response = await self.call("delete", "DELETE", f"/api/documents/{document_id}")
        self.deletes += 1
        if response is not None and response.status_code == 204:
            self.documents.remove(document_id)
            self.record.deleted.add(document_id)

    async def upload(self) -> None:
        """Grant, send the bytes to the store as the grant says, register."""
        file = generated_file(self.rng, self.number, self.uploads, self.options.pdf_every)
        self.uploads += 1
        granted = await self.call(
            "grant",
            "POST",
            "/api/uploads",
            json={
                "project_id": self.project_id,
                "filename": file.filename,
                "content_type": file.content_type,
                "size": len(file.data),
            },
        )
        if granted is None or granted.status_code != 201:
            return
        grant = granted.json()
        if grant["method"] == "PUT":
            sent = await self.call(
                "store",
                "PUT",
                grant["url"],
                via=self.store,
                content=file.data,
                headers=grant["headers"],
            )
        else:
            sent = await self.call(
                "store",
                "POST",
                grant["url"],
                via=self.store,
                data=grant["fields"],
                files={"file": (file.filename, file.data, file.content_type)},
            )
        if sent is None or sent.status_code not in (200, 201, 204):
            return
        registered = await self.call(
            "register",
            "POST",
            "/api/documents",
            json={"project_id": self.project_id, "upload_id": grant["upload_id"]},
        )
        if registered is not None and registered.status_code == 201:
            document_id = registered.json()["id"]
            self.documents.append(document_id)
            self.record.accepted[document_id] = file._replace(
                document_id=document_id, owner=self.owner
            )


async def run_clients(base_url: str, tokens: list[str], options: LoadOptions) -> LoadRecord:
    """``options.clients`` clients (users taken round-robin from ``tokens``), each in its own
    new project, for ``options.seconds``."""
    record = LoadRecord()
    # Idle connections are dropped before uvicorn's 5 s keep-alive timeout closes them from
    # its side: a close racing a new request would reset it (a client-side race, not a
    # server failure).
    limits = httpx.Limits(max_connections=options.clients * 2, keepalive_expiry=2.0)
    timeout = httpx.Timeout(options.request_timeout)
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(httpx.AsyncClient(timeout=timeout, limits=limits))
        https = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=base_url,
                    headers={"Authorization": f"Bearer {tokens[number % len(tokens)]}"},
                    timeout=timeout,
                    limits=limits,
                )
            )
            for number in range(options.clients)
        ]
        # All at once, so the load starts as soon as the projects exist.
        projects = await asyncio.gather(
            *(
                http.post("/api/projects", json={"name": f"load {number:03d}"})
                for number, http in enumerate(https)
            )
        )
        clients = [
            Client(
                number,
                number % len(tokens),
                http,
                store,
                created.raise_for_status().json()["id"],
                options,
                record,
            )
            for number, (http, created) in enumerate(zip(https, projects, strict=True))
        ]
        started = time.monotonic()
        deadline = started + options.seconds
        await asyncio.gather(*(client.run(deadline) for client in clients))
        record.elapsed = time.monotonic() - started
    return record


# --- the audit ------------------------------------------------------------------------------


def wait_until_settled(db_url: str, document_ids: list[str], within: float) -> float:
    """Seconds until none of ``document_ids`` is pending/processing, or ``within`` ran out."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        with psycopg.connect(db_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM documents WHERE id = ANY(%s::uuid[])"
                " AND status NOT IN ('ready', 'error')",
                (document_ids,),
            ).fetchone()
        if row is not None and row[0] == 0:
            break
        time.sleep(0.5)
    return time.monotonic() - started


def stored_states(db_url: str, document_ids: list[str]) -> dict[str, dict[str, Any]]:
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT id::text, status, error_code, error_message, content_hash"
            " FROM documents WHERE id = ANY(%s::uuid[])",
            (document_ids,),
        ).fetchall()
    return {
        row[0]: {"status": row[1], "error_code": row[2], "error_message": row[3], "hash": row[4]}
        for row in rows
    }


def fresh_hash(file: UploadedFile) -> str | None:
    """sha256 of an in-process extraction of the same bytes; None when extraction refuses."""
    try:
        extraction = extract_document(file.data, file.filename, file.content_type)
    except ExtractionError:
        return None
    return hashlib.sha256(extraction.markdown.encode("utf-8")).hexdigest()


def served_hash(http: httpx.Client, document_id: str) -> str | None:
    """sha256 of the whole Markdown ``GET /api/documents/{id}/text`` returns (None if cut)."""
    response = http.get(f"/api/documents/{document_id}/text")
    response.raise_for_status()
    body = response.json()
    if body["truncated"]:
        return None
    return hashlib.sha256(body["markdown"].encode("utf-8")).hexdigest()


def audit(
    db_url: str, base_url: str, tokens: list[str], record: LoadRecord, settle_within: float
) -> Audit:
    kept = {key: file for key, file in record.accepted.items() if key not in record.deleted}
    settle = wait_until_settled(db_url, list(kept), settle_within)
    states = stored_states(db_url, list(kept))
    lost = [key for key in kept if states.get(key, {}).get("status") not in SETTLED]
    errors = [key for key in kept if states.get(key, {}).get("status") == "error"]
    without_reason = [
        key
        for key in errors
        if not states[key]["error_code"] or not (states[key]["error_message"] or "").strip()
    ]
    ready = [key for key in kept if states.get(key, {}).get("status") == "ready"]
    mismatches: list[str] = []
    clients = [
        httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
        for token in tokens
    ]
    try:
        for key in ready:
            file = kept[key]
            expected = fresh_hash(file)
            served = served_hash(clients[file.owner], key)
            if expected is None or states[key]["hash"] != expected or served != expected:
                mismatches.append(key)
    finally:
        for http in clients:
            http.close()
    extractable_errors = [key for key in errors if fresh_hash(kept[key]) is not None]
    return Audit(
        accepted=len(record.accepted),
        deleted=len(record.deleted),
        ready=len(ready),
        error=len(errors),
        lost=lost,
        errors_without_reason=without_reason,
        hash_mismatches=mismatches,
        settle_seconds=settle,
        error_codes=Counter(str(states[key]["error_code"]) for key in errors),
        extractable_errors=extractable_errors,
    )


# --- the service under test -----------------------------------------------------------------


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


def run(options: LoadOptions) -> LoadReport:
    """Start the service, load it, let uploads settle, audit them; everything stops by itself."""
    with running_service(options) as service:
        record = asyncio.run(run_clients(service.base_url, service.tokens, options))
        result = audit(
            service.db_url, service.base_url, service.tokens, record, options.settle_seconds
        )
        tracebacks = logged_tracebacks(service.fleet)
    return LoadReport(options, record, result, os.getloadavg(), tracebacks)


# --- the report -----------------------------------------------------------------------------


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


def parse_args(argv: list[str] | None) -> LoadOptions:
    parser = argparse.ArgumentParser(description="Bounded loopback load test of the service.")
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


if __name__ == "__main__":
    sys.exit(main())
