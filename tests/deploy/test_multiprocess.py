"""The production layout without Docker: two API processes and two workers sharing
one PostgreSQL and one S3 store, each a real ``shortlist`` subprocess.

A document uploaded through one API (a real presigned POST to the S3 server)
is extracted by whichever worker takes the job, found through the other API,
and once deleted through the first API the second stops returning it: no
process holds state the others depend on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.deploy.processes import (
    HOST,
    ProcessFleet,
    clean_environment,
    free_port,
    wait_until_healthy,
)
from tests.integration.documents.conftest import make_pdf
from tests.support.originals import upload_document, wait_settled
from tests.support.seaweed import SeaweedS3, run_seaweed_s3

# Each page holds more text than one chunk's budget, so the hit cites page 2 alone.
FILLER = " ".join(["Cells keep their membranes intact while dividing."] * 30)
PAGES = [
    f"Photosynthesis converts light energy into chemical energy in chloroplasts. {FILLER}",
    f"The mitochondria produce adenosine triphosphate through oxidative phosphorylation. {FILLER}",
]
QUERY = "oxidative phosphorylation mitochondria"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def seaweed() -> Iterator[SeaweedS3]:
    with run_seaweed_s3("shortlist-deploy") as server:
        yield server


def service_env(db_url: str, s3: SeaweedS3, data_dir: Path) -> dict[str, str]:
    data_dir.mkdir(parents=True, exist_ok=True)
    return clean_environment(
        {
            "DATABASE_URL": db_url,
            "SHORTLIST_DATA_DIR": str(data_dir),
            "SHORTLIST_STORAGE__BACKEND": "s3",
            "SHORTLIST_STORAGE__S3_ENDPOINT_URL": s3.endpoint_url,
            "SHORTLIST_STORAGE__S3_REGION": s3.region,
            "SHORTLIST_STORAGE__S3_BUCKET": s3.bucket,
            "SHORTLIST_STORAGE__S3_ACCESS_KEY_ID": s3.access_key_id,
            "SHORTLIST_STORAGE__S3_SECRET_ACCESS_KEY": s3.secret_access_key,
            "SHORTLIST_STORAGE__SIGNING_SECRET": "deploy-test-shared-secret",
            "SHORTLIST_SEARCH__RERANKER": "none",
            "SHORTLIST_JOBS__CONCURRENCY": "1",
        }
    )


def search_ids(api: httpx.Client, project_id: str, query: str) -> list[str]:
    found = api.post(f"/api/projects/{project_id}/search", json={"query": query})
    assert found.status_code == 200, found.text
    return [hit["document"]["id"] for hit in found.json()["results"]]


def test_two_apis_and_two_workers_share_one_database_and_one_s3_store(
    db_url: str, seaweed: SeaweedS3, tmp_path: Path
) -> None:
    started = time.monotonic()
    ports = [free_port(), free_port()]
    with ProcessFleet(tmp_path) as fleet:
        envs = [
            service_env(db_url, seaweed, tmp_path / f"data-{name}") for name in ("api1", "api2")
        ]
        apis = [
            fleet.start(
                f"api{n + 1}", ["serve", "--host", HOST, "--port", str(port), "--no-worker"], env
            )
            for n, (port, env) in enumerate(zip(ports, envs, strict=True))
        ]
        for n in (1, 2):
            worker_env = service_env(db_url, seaweed, tmp_path / f"data-worker{n}")
            fleet.start(f"worker{n}", ["worker", "--name", f"worker{n}"], worker_env)
        created = json.loads(fleet.run(["user", "create", "alice", "--json"], envs[0]))
        token, project_id = created["token"], created["project"]["id"]
        urls = [f"http://{HOST}:{port}" for port in ports]
        for api, url in zip(apis, urls, strict=True):
            wait_until_healthy(api, url)

        headers = {"Authorization": f"Bearer {token}"}
        with (
            httpx.Client(base_url=urls[0], headers=headers, timeout=30.0) as api1,
            httpx.Client(base_url=urls[1], headers=headers, timeout=30.0) as api2,
        ):
            document = upload_document(  # a presigned POST straight to S3
                api1, project_id, "cells.pdf", make_pdf(PAGES), "application/pdf", method="POST"
            )
            assert document["status"] == "pending"

            settled = wait_settled(api2, document["id"], within=90.0)
            assert settled["status"] == "ready", settled
            assert settled["page_count"] == len(PAGES)

            found = api2.post(f"/api/projects/{project_id}/search", json={"query": QUERY})
            assert found.status_code == 200, found.text
            first = found.json()["results"][0]
            assert first["document"] == {"id": document["id"], "name": "cells.pdf"}
            assert first["pages"] == [2, 2]
            assert "mitochondria" in first["text"]

            deleted = api1.delete(f"/api/documents/{document['id']}")
            assert deleted.status_code == 204, deleted.text
            assert document["id"] not in search_ids(api2, project_id, QUERY)
            listed = api2.get(f"/api/projects/{project_id}/documents").json()["documents"]
            assert document["id"] not in [item["id"] for item in listed]
            assert api2.get(f"/api/documents/{document['id']}").status_code == 404

        assert all(item.process.poll() is None for item in fleet.processes), "a process died"
    print(f"multi-process layout checked in {time.monotonic() - started:.1f} s")
