"""Everything a running Shortlist process holds open, built once and torn down once.

The web app's lifespan and the CLI's commands both open a :class:`Runtime`, so
the database, migrations, pool, blob store, job queue and search engine are set
up the same way whichever door a request comes through.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import SecretStr

from extract import SandboxPool
from service.jobs import Jobs
from service.services.extraction import sandbox_pool
from service.services.page_images import PageImages
from service.services.rate_limit import RateLimiter
from service.services.search import SearchEngine
from service.services.url_fetch import Resolver, system_resolver
from service.settings import Settings
from service.storage.blobs import BlobStore, open_blob_store
from service.storage.db import DatabaseLocation, Pool, create_pool, locate_database
from service.storage.migrations import migrate
from service.storage.queue_schema import apply_queue_schema

logger = logging.getLogger(__name__)


class Runtime:
    """The open resources of one process.

    A plain class on purpose: Litestar injects it as a dependency and would
    otherwise try to validate a dataclass field by field.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        database: DatabaseLocation,
        pool: Pool,
        blobs: BlobStore,
        jobs: Jobs,
        search: SearchEngine,
        sandboxes: SandboxPool,
        page_images: PageImages,
        resolve: Resolver = system_resolver,
    ) -> None:
        self.settings = settings
        self.database = database
        self.pool = pool
        self.blobs = blobs
        self.jobs = jobs
        self.search = search
        self.sandboxes = sandboxes
        """Extraction processes; spares start with the first worker or extraction."""
        self.page_images = page_images
        """Page drawing processes (started on the first page image) and the drawn-page cache."""
        self.resolve = resolve
        """How URL imports look host names up (the system's resolver, called in a thread)."""
        self.search_limiter = RateLimiter(settings.server.search_rate_per_minute)
        self.upload_limiter = RateLimiter(settings.server.upload_rate_per_minute)


async def prepare_database(url: str) -> None:
    """Apply Shortlist's migrations and create the job queue's tables, under one lock."""
    await migrate(url, after=apply_queue_schema)


def signing_secret(settings: Settings) -> str:
    """The local store's HMAC key: the setting, else one generated once into the data dir."""
    if settings.storage.signing_secret is not None:
        return settings.storage.signing_secret.get_secret_value()
    path = settings.data_dir / "signing.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _create_once(path, secrets.token_urlsafe(48))
    return path.read_text(encoding="utf-8").strip()


def _create_once(path: Path, text: str) -> None:
    """Write a new owner-only file; if another process won the race, keep theirs."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _reveal(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def build_blob_store(settings: Settings) -> BlobStore:
    storage = settings.storage
    if settings.storage_backend == "s3":
        return open_blob_store(
            "s3",
            s3_endpoint_url=storage.s3_endpoint_url,
            s3_presign_endpoint_url=storage.s3_public_endpoint_url,
            s3_region=storage.s3_region,
            s3_bucket=storage.s3_bucket,
            s3_access_key_id=_reveal(storage.s3_access_key_id),
            s3_secret_access_key=_reveal(storage.s3_secret_access_key),
            s3_addressing_style=storage.s3_addressing_style,
        )
    return open_blob_store(
        "local",
        local_dir=storage.local_dir or settings.data_dir / "blobs",
        public_base_url=settings.public_url,
        signing_secret=signing_secret(settings),
    )


@contextlib.asynccontextmanager
async def open_runtime(
    settings: Settings,
    *,
    blobs: BlobStore | None = None,
    background: bool = True,
    score_every_candidate: bool = False,
    resolve: Resolver = system_resolver,
) -> AsyncIterator[Runtime]:
    """Locate (or start) the database, migrate it, open pool and queue; undo all of it on exit.

    ``blobs`` is the store to use when the caller built it already (the web app
    does, to mount the local store's routes); otherwise it is built here.
    ``background=False`` is for one-shot commands: the search caches are not
    warmed in the background, so the process exits as soon as its work is done;
    ``score_every_candidate`` is :class:`SearchEngine`'s (one-shot commands set it).
    ``resolve`` looks host names up for URL imports (tests pass a slow one).
    """
    database = locate_database(settings)
    try:
        await prepare_database(database.url)
        pool = create_pool(database.url, settings)
        await pool.open(wait=True, timeout=max(10.0, settings.database.pool_timeout))
        jobs = Jobs(database.url, settings)
        search = SearchEngine(
            settings, background=background, score_every_candidate=score_every_candidate
        )
        sandboxes = sandbox_pool(settings)
        page_images = PageImages(settings)
        try:
            await jobs.open()
            yield Runtime(
                settings=settings,
                database=database,
                pool=pool,
                blobs=blobs or build_blob_store(settings),
                jobs=jobs,
                search=search,
                sandboxes=sandboxes,
                page_images=page_images,
                resolve=resolve,
            )
        finally:
            page_images.close()
            sandboxes.close()
            search.close()
            await jobs.close()
            await pool.close()
    finally:
        database.close()
