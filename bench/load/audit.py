"""The audit after the load: every kept upload settled, with a reason or the right hash."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from typing import Any, NamedTuple

import httpx
import psycopg

from bench.load.clients import LoadRecord
from bench.load.files import UploadedFile
from extract import ExtractionError, extract_document

SETTLED = ("ready", "error")


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
