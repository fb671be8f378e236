"""Fixtures for the document flow: users, a running app with its worker, and upload helpers."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pymupdf
import pytest
from litestar.testing import AsyncTestClient
from psycopg.rows import dict_row

from service.app import create_app
from service.runtime import Runtime
from service.services import users
from service.services.uploads import sweep_abandoned_uploads
from service.settings import Settings


async def new_user(db_url: str, name: str) -> users.NewUser:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await users.create_user(conn, name)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def make_pdf(pages: list[str]) -> bytes:
    """A real PDF with one text paragraph per page."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 770), text, fontsize=11)
    data: bytes = doc.tobytes()
    doc.close()
    return data


async def sweep_uploads_now(runtime: Runtime, db_url: str) -> int:
    """Run the abandoned-upload sweep with the app's settings and blob store, on a
    connection of the test's own event loop (the app's pool belongs to the app's loop,
    which runs in another thread)."""
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await sweep_abandoned_uploads(runtime, conn)


def padded_pdf(target: int) -> bytes:
    """A real three-page text PDF ("glacier survey results") padded to about ``target``
    bytes with an incompressible attachment."""
    doc = pymupdf.open()
    for number in range(1, 4):
        doc.new_page().insert_textbox(
            pymupdf.Rect(72, 72, 540, 770),
            f"Page {number}: glacier survey results. " + "Ice cores hold old air. " * 40,
            fontsize=11,
        )
    base = len(doc.tobytes())
    doc.embfile_add("padding.bin", os.urandom(max(0, target - base - 4096)))
    data: bytes = doc.tobytes(deflate=False)
    doc.close()
    return data


class Uploader:
    """Drives the three-step flow exactly as a client would."""

    def __init__(self, client: Any, token: str) -> None:
        self.client = client
        self.headers = bearer(token)

    async def grant(
        self, project_id: Any, filename: str, data: bytes, content_type: str = "application/pdf"
    ) -> Any:
        return await self.client.post(
            "/api/uploads",
            json={
                "project_id": str(project_id),
                "filename": filename,
                "content_type": content_type,
                "size": len(data),
            },
            headers=self.headers,
        )

    async def send(self, grant: dict[str, Any], data: bytes) -> Any:
        url = urlsplit(grant["url"])
        target = f"{url.path}?{url.query}" if url.query else url.path
        assert grant["method"] == "PUT", "the in-process client speaks to the local store"
        return await self.client.put(target, content=data, headers=grant["headers"])

    async def upload(
        self, project_id: Any, filename: str, data: bytes, content_type: str = "application/pdf"
    ) -> Any:
        granted = await self.grant(project_id, filename, data, content_type)
        assert granted.status_code == 201, granted.text
        grant = granted.json()
        sent = await self.send(grant, data)
        assert sent.status_code in (200, 201), sent.text
        return await self.client.post(
            "/api/documents",
            json={"project_id": str(project_id), "upload_id": grant["upload_id"]},
            headers=self.headers,
        )

    async def wait_settled(self, document_id: str, within: float = 60.0) -> dict[str, Any]:
        import anyio

        deadline = time.monotonic() + within
        while True:
            body: dict[str, Any] = (
                await self.client.get(f"/api/documents/{document_id}", headers=self.headers)
            ).json()
            if body["status"] in ("ready", "error") or time.monotonic() > deadline:
                return body
            await anyio.sleep(0.2)


@pytest.fixture
async def app_client(settings: Settings) -> AsyncIterator[Any]:
    async with AsyncTestClient(app=create_app(settings)) as client:
        yield client


def without_worker(settings: Settings) -> Settings:
    """The same settings with no in-process worker, so nothing runs the maintenance sweep
    (or extracts) behind a test's back."""
    server = settings.server.model_copy(update={"run_worker": False})
    return settings.model_copy(update={"server": server})


@pytest.fixture
async def app_client_without_worker(settings: Settings) -> AsyncIterator[Any]:
    async with AsyncTestClient(app=create_app(without_worker(settings))) as client:
        yield client


@pytest.fixture
def data_dir(settings: Settings) -> Path:
    return settings.data_dir
