"""Fixtures: a real SeaweedFS S3 server, an S3 store on it, and the local store
served by uvicorn over real HTTP."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from litestar import Litestar

from service.storage.blobs import LocalBlobStore, S3BlobStore
from service.storage.blobs.local_routes import local_blob_router
from tests.integration.blobs.live_server import base_url_of, bind_loopback, run_live_server
from tests.support.seaweed import SeaweedS3, run_seaweed_s3

SIGNING_SECRET = secrets.token_urlsafe(32)


@pytest.fixture(scope="session")
def seaweed_s3() -> Iterator[SeaweedS3]:
    """A running SeaweedFS with S3 on loopback, shared by the whole session."""
    with run_seaweed_s3() as server:
        yield server


@pytest.fixture(scope="session")
def s3_store(seaweed_s3: SeaweedS3) -> S3BlobStore:
    return S3BlobStore(
        bucket=seaweed_s3.bucket,
        endpoint_url=seaweed_s3.endpoint_url,
        region=seaweed_s3.region,
        access_key_id=seaweed_s3.access_key_id,
        secret_access_key=seaweed_s3.secret_access_key,
        addressing_style="path",
    )


@pytest.fixture(scope="session")
def local_blob_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("blobs")


@pytest.fixture(scope="session")
def local_server(local_blob_dir: Path) -> Iterator[tuple[str, LocalBlobStore]]:
    """The local store's routes served by uvicorn; yields (base URL, store)."""
    with closing(bind_loopback()) as sock:
        store = LocalBlobStore(
            local_blob_dir, public_base_url=base_url_of(sock), signing_secret=SIGNING_SECRET
        )
        app = Litestar(route_handlers=[local_blob_router(store)])
        with run_live_server(app, sock) as base_url:
            yield base_url, store


@pytest.fixture
def local_store(local_server: tuple[str, LocalBlobStore]) -> LocalBlobStore:
    return local_server[1]


@pytest.fixture
def key() -> str:
    """A fresh key shaped like the service's upload keys."""
    return f"projects/{uuid.uuid4()}/uploads/{uuid.uuid4()}"
