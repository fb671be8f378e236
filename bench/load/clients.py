"""The simulated clients: each loops a weighted mix of requests and times every one."""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import httpx

from bench.load.files import WORDS, UploadedFile, distinctive_word, generated_file
from bench.load.options import LoadOptions

#: How often each client picks each action (relative weights).
MIX: dict[str, int] = {"search": 40, "list": 12, "get": 12, "text": 12, "upload": 10, "delete": 8}


class Sample(NamedTuple):
    kind: str
    status: int | None
    """HTTP status, or None when no answer came (timeout, connection error)."""
    seconds: float
    failure: str = ""
    """Why no answer came: the ``httpx`` exception's name."""


@dataclass
class LoadRecord:
    samples: list[Sample] = field(default_factory=list)
    accepted: dict[str, UploadedFile] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    elapsed: float = 0.0


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
