"""Through the REST door: a passage another document repeats nearly word for word shows once,
and says where the copy is."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.documents.conftest import bearer, new_user
from tests.support.abstracts import add_ready_markdown

pytestmark = pytest.mark.anyio

CLAUSE = (
    "The supplier shall deliver the {item} to the warehouse within {days} working days of the "
    "order, packed on pallets no higher than 1.8 metres, and shall bear the cost of any "
    "return caused by damage in transit or by goods that do not match the order."
)


async def test_a_near_copy_in_another_version_is_folded_and_named(
    app_client_without_worker: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    add_ready_markdown(
        db_url,
        alice.project.id,
        [
            (
                "contract-2023.pdf",
                "<!-- page 1 -->\nParties and term.\n\n<!-- page 2 -->\n"
                + CLAUSE.format(item="spare parts", days="ten"),
            ),
            (
                "contract-2024.pdf",
                "<!-- page 1 -->\nParties, term and renewal.\n\n<!-- page 2 -->\nPrices.\n\n"
                "<!-- page 3 -->\n" + CLAUSE.format(item="spare parts", days="fifteen"),
            ),
        ],
    )
    found = await app_client_without_worker.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "delivery to the warehouse damaged in transit"},
        headers=bearer(alice.token),
    )
    assert found.status_code == 200, found.text
    results = found.json()["results"]
    clauses = [result for result in results if "warehouse" in result["text"]]
    assert len(clauses) == 1, results
    (copy,) = clauses[0]["near_copies"]
    versions = {"contract-2023.pdf": [2, 2], "contract-2024.pdf": [3, 3]}
    shown = clauses[0]["document"]["name"]
    (other,) = set(versions) - {shown}
    assert copy["document"]["name"] == other
    assert copy["pages"] == versions[other]
    assert 0.5 <= copy["similarity"] < 1.0
    assert copy["chunk_id"].startswith(copy["document"]["id"] + ":")
    assert all(result["near_copies"] == [] for result in results if result is not clauses[0])


async def test_the_openapi_schema_describes_the_folded_copies(
    app_client_without_worker: Any,
) -> None:
    schema = (await app_client_without_worker.get("/schema/openapi.json")).json()
    components = schema["components"]["schemas"]
    hit = components["SearchHit"]
    assert "near_copies" in hit["required"]
    assert hit["properties"]["near_copies"]["description"].startswith("Lower-ranked passages")
    assert set(components["SearchNearCopy"]["properties"]) == {
        "document", "pages", "chunk_id", "similarity"
    }  # fmt: skip


async def test_the_openapi_schema_describes_the_answer_spans(
    app_client_without_worker: Any,
) -> None:
    schema = (await app_client_without_worker.get("/schema/openapi.json")).json()
    hit = schema["components"]["schemas"]["SearchHit"]
    assert "answer_spans" in hit["required"]
    spans = hit["properties"]["answer_spans"]
    assert spans["type"] == "array"
    assert spans["items"]["type"] == "array"
    assert "character offsets into text" in spans["description"]
