from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from service.runtime import Runtime
from tests.integration.documents.conftest import (
    Uploader,
    bearer,
    make_pdf,
    new_user,
    padded_pdf,
    sweep_uploads_now,
)
from tests.unit.extract import samples

pytestmark = pytest.mark.anyio

# Each page holds more text than one chunk's budget, so no chunk spans both pages.
FILLER = " ".join(["Cells keep their membranes intact while dividing."] * 30)
TWO_PAGES = make_pdf(
    [
        f"Photosynthesis converts light energy into chemical energy in chloroplasts. {FILLER}",
        f"The mitochondria produce adenosine triphosphate through oxidative phosphorylation. {FILLER}",
    ]
)


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    assert response.json()["message"]


async def test_an_uploaded_pdf_becomes_ready_and_searchable_with_page_citations(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)

    created = await uploader.upload(alice.project.id, "cells.pdf", TWO_PAGES)
    assert created.status_code == 201, created.text
    assert created.json()["status"] == "pending"
    document = await uploader.wait_settled(created.json()["id"])

    assert document["status"] == "ready", document
    assert document["page_count"] == 2
    assert document["searchable"] is True
    found = await app_client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "oxidative phosphorylation mitochondria"},
        headers=bearer(alice.token),
    )
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["results"][0]["document"] == {"id": document["id"], "name": "cells.pdf"}
    assert body["results"][0]["pages"] == [2, 2]
    assert "mitochondria" in body["results"][0]["text"]
    assert body["sources"][0]["first_page"] == 2
    assert body["reranker"] == "none"
    assert body["insufficient_evidence"] is False
    assert 0.5 <= body["results"][0]["relevance"] <= 1.0
    assert body["results"][0]["relevance_label"] in ("medium", "high")
    absent = await app_client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "How long should sourdough bread rise before baking in the oven?"},
        headers=bearer(alice.token),
    )
    assert absent.status_code == 200, absent.text
    assert absent.json()["insufficient_evidence"] is True
    assert all(hit["relevance_label"] == "low" for hit in absent.json()["results"])


async def test_the_text_of_a_page_range_can_be_read(app_client: Any, db_url: str) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    document = await uploader.wait_settled(
        (await uploader.upload(alice.project.id, "cells.pdf", TWO_PAGES)).json()["id"]
    )

    page_two = await app_client.get(
        f"/api/documents/{document['id']}/text?pages=2", headers=bearer(alice.token)
    )
    bad = await app_client.get(
        f"/api/documents/{document['id']}/text?pages=3-1", headers=bearer(alice.token)
    )

    assert page_two.status_code == 200
    assert "mitochondria" in page_two.json()["markdown"]
    assert "Photosynthesis" not in page_two.json()["markdown"]
    assert page_two.json()["pages"] == [2, 2]
    assert_error(bad, 400, "invalid_page_range")


async def test_refusals_happen_before_any_byte_moves(app_client: Any, db_url: str) -> None:
    alice = await new_user(db_url, "alice")
    bob = await new_user(db_url, "bob")
    uploader = Uploader(app_client, alice.token)
    await uploader.wait_settled(
        (await uploader.upload(alice.project.id, "Report.pdf", TWO_PAGES)).json()["id"]
    )

    too_big = await app_client.post(
        "/api/uploads",
        json={
            "project_id": str(alice.project.id),
            "filename": "big.pdf",
            "content_type": "application/pdf",
            "size": 51 * 1024 * 1024,
        },
        headers=bearer(alice.token),
    )
    wrong_type = await uploader.grant(
        alice.project.id, "tool.exe", b"MZ" * 10, "application/x-msdownload"
    )
    duplicate = await uploader.grant(alice.project.id, "  report.PDF ", TWO_PAGES)
    not_yours = await Uploader(app_client, bob.token).grant(alice.project.id, "x.pdf", TWO_PAGES)

    assert_error(too_big, 413, "file_too_large")
    assert_error(wrong_type, 415, "unsupported_file_type")
    assert_error(duplicate, 409, "duplicate_document_name")
    assert_error(not_yours, 404, "project_not_found")


async def test_a_49_mb_upload_is_granted_and_a_51_mb_one_refused(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")

    ok = await app_client.post(
        "/api/uploads",
        headers=bearer(alice.token),
        json={
            "project_id": str(alice.project.id),
            "filename": "big.pdf",
            "content_type": "application/pdf",
            "size": 49 * 1024 * 1024,
        },
    )
    refused = await app_client.post(
        "/api/uploads",
        headers=bearer(alice.token),
        json={
            "project_id": str(alice.project.id),
            "filename": "bigger.pdf",
            "content_type": "application/pdf",
            "size": 51 * 1024 * 1024,
        },
    )

    assert ok.status_code == 201
    assert ok.json()["method"] == "PUT"
    assert_error(refused, 413, "file_too_large")


async def test_registering_needs_the_bytes_in_the_store_and_works_once(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    grant = (await uploader.grant(alice.project.id, "cells.pdf", TWO_PAGES)).json()
    register = {"project_id": str(alice.project.id), "upload_id": grant["upload_id"]}

    early = await app_client.post("/api/documents", json=register, headers=bearer(alice.token))
    await uploader.send(grant, TWO_PAGES)
    first = await app_client.post("/api/documents", json=register, headers=bearer(alice.token))
    second = await app_client.post("/api/documents", json=register, headers=bearer(alice.token))

    assert_error(early, 400, "upload_incomplete")
    assert first.status_code == 201
    assert_error(second, 409, "upload_already_used")


async def test_only_grants_never_registered_well_after_expiry_are_swept(
    app_client_without_worker: Any, db_url: str
) -> None:
    app_client = app_client_without_worker  # only this test sweeps
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    runtime: Runtime = app_client.app.state.runtime
    grants = {}
    for name, expired_ago in (("abandoned.pdf", "2 hours"), ("late.pdf", "10 minutes")):
        grant = (await uploader.grant(alice.project.id, name, TWO_PAGES)).json()
        assert (await uploader.send(grant, TWO_PAGES)).status_code in (200, 201)
        async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
            await conn.execute(
                "UPDATE uploads SET expires_at = now() - %s::interval WHERE id = %s",
                (expired_ago, grant["upload_id"]),
            )
        grants[name] = grant

    swept = await sweep_uploads_now(runtime, db_url)

    def key(name: str) -> str:
        return f"projects/{alice.project.id}/uploads/{grants[name]['upload_id']}"

    assert swept == 1
    assert runtime.blobs.head(key("abandoned.pdf")) is None
    assert runtime.blobs.head(key("late.pdf")) is not None
    gone = await app_client.post(
        "/api/documents",
        json={
            "project_id": str(alice.project.id),
            "upload_id": grants["abandoned.pdf"]["upload_id"],
        },
        headers=bearer(alice.token),
    )
    kept = await app_client.post(
        "/api/documents",
        json={"project_id": str(alice.project.id), "upload_id": grants["late.pdf"]["upload_id"]},
        headers=bearer(alice.token),
    )
    assert_error(gone, 404, "upload_not_found")
    assert kept.status_code == 201, kept.text


async def test_two_uploads_of_the_same_name_racing_leave_exactly_one_document(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    grants = [
        (await uploader.grant(alice.project.id, "same.pdf", TWO_PAGES)).json() for _ in range(2)
    ]
    for grant in grants:
        await uploader.send(grant, TWO_PAGES)

    responses = await asyncio.gather(
        *(
            app_client.post(
                "/api/documents",
                json={"project_id": str(alice.project.id), "upload_id": g["upload_id"]},
                headers=bearer(alice.token),
            )
            for g in grants
        )
    )

    assert sorted(r.status_code for r in responses) == [201, 409]
    loser = next(r for r in responses if r.status_code == 409)
    assert loser.json()["code"] == "duplicate_document_name"
    listing = (
        await app_client.get(
            f"/api/projects/{alice.project.id}/documents", headers=bearer(alice.token)
        )
    ).json()
    assert [d["name"] for d in listing["documents"]] == ["same.pdf"]


async def test_a_scanned_pdf_is_listed_as_not_searchable_with_a_reason_and_hint(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    scan = samples.pdf_pages("s")  # a scanned blank sheet: OCR finds nothing legible

    created = await uploader.upload(alice.project.id, "scan.pdf", scan)
    document = await uploader.wait_settled(created.json()["id"])

    assert document["status"] == "error"
    assert document["searchable"] is False
    assert document["error"]["code"] == "scanned_pdf"
    assert "scan" in document["error"]["message"].lower()
    assert "found nothing legible" in document["error"]["message"]
    assert document["error"]["hint"]
    assert "OCR first" not in document["error"]["hint"]  # no option that does not exist


async def test_an_uploaded_image_is_recognised_flagged_and_searchable(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    image = samples.png_image("Invoice number 4711 is due on the first of March")

    created = await uploader.upload(alice.project.id, "invoice.png", image, "image/png")
    assert created.status_code == 201, created.text
    document = await uploader.wait_settled(created.json()["id"])

    assert document["status"] == "ready", document
    assert document["kind"] == "image"
    assert document["ocr_pages"] == [1]
    assert any("Text recognised from images" in warning for warning in document["warnings"])
    found = await app_client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "invoice 4711 due"},
        headers=bearer(alice.token),
    )
    assert found.status_code == 200, found.text
    assert found.json()["results"][0]["document"]["name"] == "invoice.png"


async def test_deleting_a_document_removes_it_from_lists_search_and_the_store(
    app_client: Any, db_url: str, data_dir: Any
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    document = await uploader.wait_settled(
        (await uploader.upload(alice.project.id, "cells.pdf", TWO_PAGES)).json()["id"]
    )
    stored = list((data_dir / "blobs").rglob("*"))
    assert any(path.is_file() for path in stored)

    first = await app_client.delete(f"/api/documents/{document['id']}", headers=bearer(alice.token))
    again = await app_client.delete(f"/api/documents/{document['id']}", headers=bearer(alice.token))
    listing = (
        await app_client.get(
            f"/api/projects/{alice.project.id}/documents", headers=bearer(alice.token)
        )
    ).json()
    found = (
        await app_client.post(
            f"/api/projects/{alice.project.id}/search",
            json={"query": "mitochondria"},
            headers=bearer(alice.token),
        )
    ).json()

    assert (first.status_code, again.status_code) == (204, 204)
    assert listing["documents"] == []
    assert found["results"] == []
    assert not any(path.is_file() for path in (data_dir / "blobs").rglob("*"))


async def test_another_users_document_cannot_be_read_opened_or_deleted(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    bob = await new_user(db_url, "bob")
    uploader = Uploader(app_client, alice.token)
    document = await uploader.wait_settled(
        (await uploader.upload(alice.project.id, "cells.pdf", TWO_PAGES)).json()["id"]
    )
    path = f"/api/documents/{document['id']}"

    for response in (
        await app_client.get(path, headers=bearer(bob.token)),
        await app_client.get(f"{path}/text", headers=bearer(bob.token)),
        await app_client.get(f"{path}/file", headers=bearer(bob.token)),
        await app_client.post(f"{path}/reextract", headers=bearer(bob.token)),
    ):
        assert_error(response, 404, "document_not_found")
    await app_client.delete(path, headers=bearer(bob.token))
    assert (await app_client.get(path, headers=bearer(alice.token))).json()["status"] == "ready"


async def test_the_original_opens_inline_and_reextract_settles_again(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    document = await uploader.wait_settled(
        (await uploader.upload(alice.project.id, "cells.pdf", TWO_PAGES)).json()["id"]
    )

    link = (
        await app_client.get(f"/api/documents/{document['id']}/file", headers=bearer(alice.token))
    ).json()
    url = link["url"].split("//", 1)[1].split("/", 1)[1]
    original = await app_client.get("/" + url)
    again = await app_client.post(
        f"/api/documents/{document['id']}/reextract", headers=bearer(alice.token)
    )

    assert original.status_code == 200
    assert original.content == TWO_PAGES
    assert original.headers["content-disposition"].startswith("inline")
    assert again.status_code == 202
    assert (await uploader.wait_settled(document["id"]))["status"] == "ready"


async def test_a_49_mb_pdf_uploads_through_the_rest_flow_and_becomes_ready(
    app_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    data = padded_pdf(49 * 1024 * 1024)
    assert 48 * 1024 * 1024 < len(data) <= 49 * 1024 * 1024

    created = await uploader.upload(alice.project.id, "big.pdf", data)
    assert created.status_code == 201, created.text
    document = await uploader.wait_settled(created.json()["id"], within=180)

    assert document["status"] == "ready", document
    assert document["size_bytes"] == len(data)
    assert document["page_count"] == 3


async def test_a_pending_document_says_how_many_extractions_are_ahead_of_it(
    app_client_without_worker: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client_without_worker, alice.token)
    registered = []
    for number in range(3):
        answer = await uploader.upload(
            alice.project.id, f"note-{number}.md", f"# Note {number}\n".encode(), "text/markdown"
        )
        assert answer.status_code == 201, answer.text
        registered.append(answer.json()["id"])
    headers = bearer(alice.token)

    shown = [
        (await app_client_without_worker.get(f"/api/documents/{doc}", headers=headers)).json()
        for doc in registered
    ]
    listed = (
        await app_client_without_worker.get(
            f"/api/projects/{alice.project.id}/documents", headers=headers
        )
    ).json()["documents"]

    assert [d["queued_ahead"] for d in shown] == [0, 1, 2]
    assert sorted(d["queued_ahead"] for d in listed) == [0, 1, 2]
