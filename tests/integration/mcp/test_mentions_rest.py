"""The REST door onto the same mentions service: GET /api/projects/{id}/mentions."""

from __future__ import annotations

import httpx
import pytest

from tests.integration.mcp.conftest import QUOKKA, Library, report_pages

pytestmark = pytest.mark.anyio


async def test_rest_mentions_lists_every_document_with_counts_and_pages(
    base_url: str, library: Library
) -> None:
    headers = {"Authorization": f"Bearer {library.alice_token}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers) as http:
        response = await http.get(
            f"/api/projects/{library.ids['research']}/mentions",
            params=[("terms", QUOKKA.upper()), ("terms", "rangers"), ("match", "all")],
        )

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["documents_searched"] == 1 and body["documents_not_searchable"] == 1
    [document] = body["documents"]
    assert document["document"]["name"] == "report.pdf"
    counts = {term["term"]: (term["occurrences"], term["pages"]) for term in document["terms"]}
    rangers = sum(page.count("rangers") for page in report_pages())
    assert counts == {QUOKKA.upper(): (1, [3]), "rangers": (rangers, [3])}


async def test_rest_mentions_refuses_another_users_project_and_bad_match(
    base_url: str, library: Library
) -> None:
    headers = {"Authorization": f"Bearer {library.alice_token}"}
    async with httpx.AsyncClient(base_url=base_url, headers=headers) as http:
        foreign = await http.get(
            f"/api/projects/{library.ids['bob-default']}/mentions", params={"terms": "bob"}
        )
        bad = await http.get(
            f"/api/projects/{library.ids['research']}/mentions",
            params={"terms": "x", "match": "some"},
        )

    assert foreign.status_code == 404 and foreign.json()["code"] == "project_not_found"
    assert bad.status_code == 400
