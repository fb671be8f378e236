"""Promise 6: logs never contain API tokens or document text.

Every logger in the process is opened up to DEBUG and routed into pytest's
capture (including loggers that do not propagate to the root) for a whole
session: signing in to the panel, uploading a document with a distinctive
sentence, waiting for the in-process worker to extract it, searching for it,
reading it back, and knocking with bogus and revoked tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from service.services import users
from tests.integration.documents.conftest import Uploader, bearer, new_user

pytestmark = pytest.mark.anyio

SENTENCE = "Quillwort marmalade hums beneath the seventh lighthouse of Vantablue."
BOGUS_TOKENS = ["sl_deadbeef_" + "Z" * 43, "not-a-token-at-all-" + "q" * 20]


@pytest.fixture
def every_log_record(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog at DEBUG for the root and every named logger, propagating or not."""
    caplog.set_level(logging.DEBUG)
    detached: list[logging.Logger] = []
    for name in list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)
        logger = logging.getLogger(name)
        if not logger.propagate:
            logger.addHandler(caplog.handler)
            detached.append(logger)
    try:
        yield caplog
    finally:
        for logger in detached:
            logger.removeHandler(caplog.handler)


def everything_logged(caplog: pytest.LogCaptureFixture) -> str:
    parts = [caplog.text]
    for record in caplog.records:
        parts += [record.getMessage(), repr(record.args), repr(record.__dict__)]
    return "\n".join(parts)


async def test_a_whole_session_logs_neither_tokens_nor_document_text(
    client: Any, db_url: str, every_log_record: pytest.LogCaptureFixture
) -> None:
    alice = await new_user(db_url, "alice")
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        revoked, record = await users.create_token(conn, alice.user.id, label="old")
        await users.revoke_token(conn, str(record.id))

    signed_in = await client.post("/api/session", json={"token": alice.token})
    assert signed_in.status_code == 201, signed_in.text
    uploader = Uploader(client, alice.token)
    created = await uploader.upload(
        alice.project.id, "lighthouse.md", f"# Notes\n\n{SENTENCE}\n".encode(), "text/markdown"
    )
    assert created.status_code == 201, created.text
    document = await uploader.wait_settled(created.json()["id"])
    assert document["status"] == "ready", document
    found = await client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "quillwort marmalade lighthouse"},
        headers=bearer(alice.token),
    )
    assert SENTENCE in found.json()["results"][0]["text"]
    read = await client.get(f"/api/documents/{document['id']}/text", headers=bearer(alice.token))
    assert SENTENCE in read.text
    for token in [*BOGUS_TOKENS, revoked]:
        refused = await client.get("/api/projects", headers=bearer(token))
        assert refused.status_code == 401
        assert (await client.post("/api/session", json={"token": token})).status_code == 401

    logged = everything_logged(every_log_record)
    assert every_log_record.records, "the session should have logged something"
    for secret in [alice.token, revoked, *BOGUS_TOKENS]:
        assert secret not in logged
        assert secret.split("_", 2)[-1] not in logged  # not even the secret part alone
    assert SENTENCE not in logged
    assert "Quillwort" not in logged
