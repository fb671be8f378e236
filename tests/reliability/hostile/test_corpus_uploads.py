"""Promise 2 over the whole shared corpus: every file, uploaded as a user would, settles as expected.

Each file goes grant → PUT → register through the HTTP API of the app with its
in-process worker; each must end ``ready`` (manifest expects text) or ``error``
with the code and a message the manifest allows. Minutes of extraction: slow.
"""

from __future__ import annotations

import json
import mimetypes
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from tests.conftest import make_settings
from tests.integration.documents.conftest import Uploader, new_user
from tests.support.paths import CORPUS_DIR

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ERROR_CODE_FOR_EXPECTATION = {
    "scanned": "scanned_pdf",
    "encrypted": "encrypted_document",
    "corrupt": "corrupt_document",
    "empty": "empty_document",
}


def _entries() -> list[dict[str, Any]]:
    manifest = CORPUS_DIR / "manifest.json"
    if not manifest.exists():
        return []
    entries: list[dict[str, Any]] = json.loads(manifest.read_text())
    return [entry for entry in entries if entry["expect"] is not None]


ENTRIES = _entries()


@pytest.fixture
async def corpus_client(db_url: str, tmp_path: Path) -> AsyncIterator[Any]:
    settings = make_settings(db_url, tmp_path, server={"upload_rate_per_minute": 0})
    async with AsyncTestClient(app=create_app(settings), timeout=60) as client:
        yield client


def _problem(entry: dict[str, Any], document: dict[str, Any]) -> str | None:
    expect: list[str] = entry["expect"]
    if document["status"] == "ready":
        return None if "text" in expect else f"ready, but the manifest expects {expect}"
    if document["status"] != "error":
        return f"still {document['status']} after the wait"
    error = document["error"] or {}
    allowed = {ERROR_CODE_FOR_EXPECTATION[e] for e in expect if e in ERROR_CODE_FOR_EXPECTATION}
    if error.get("code") not in allowed:
        return f"error {error.get('code')}: {error.get('message')}; manifest expects {expect}"
    if not error.get("message"):
        return "error without a message"
    return None


@pytest.mark.timeout(1800)
@pytest.mark.skipif(not ENTRIES, reason=f"no corpus manifest under {CORPUS_DIR}")
async def test_every_corpus_file_uploaded_through_the_api_settles_as_its_manifest_expects(
    corpus_client: Any, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    user = await new_user(db_url, "corpus")
    uploader = Uploader(corpus_client, user.token)
    started = time.monotonic()
    registered: dict[str, str] = {}
    problems: dict[str, str] = {}
    outcomes: dict[str, int] = {}
    for index, entry in enumerate(ENTRIES):
        path = CORPUS_DIR / entry["path"]
        data = path.read_bytes()
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        # Several corpus files share a base name in different folders.
        name = f"{index:03d}-{path.name}"
        if not data:
            # An empty file is refused at the grant, before any bytes move.
            granted = await uploader.grant(user.project.id, name, data, content_type)
            outcomes["refused at grant"] = outcomes.get("refused at grant", 0) + 1
            if granted.status_code != 400 or "empty" not in entry["expect"]:
                problems[entry["path"]] = f"grant answered {granted.status_code}: {granted.text}"
            continue
        created = await uploader.upload(user.project.id, name, data, content_type)
        assert created.status_code == 201, f"{entry['path']}: {created.text}"
        registered[entry["path"]] = created.json()["id"]

    for entry in ENTRIES:
        if entry["path"] not in registered:
            continue
        document = await uploader.wait_settled(registered[entry["path"]], within=900)
        outcomes[document["status"]] = outcomes.get(document["status"], 0) + 1
        problem = _problem(entry, document)
        if problem is not None:
            problems[entry["path"]] = problem

    with capsys.disabled():
        print(
            f"\ncorpus via API: {len(ENTRIES)} files, {outcomes}, "
            f"{time.monotonic() - started:.0f} s wall time"
        )
    assert not problems, json.dumps(problems, indent=1)
