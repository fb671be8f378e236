"""find_mentions matches what search matches: exact phrases across line breaks, hyphenation,
the extractor's markup and CJK text (no word boundaries), on written Markdown and on the
corpus pages issue #26 names (MuPDF manual p. 24, kampo.pdf)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.documents.conftest import bearer, new_user
from tests.support.abstracts import add_ready_markdown
from tests.support.corpus_pages import page_markdown
from tests.support.paths import CORPUS_DIR

pytestmark = pytest.mark.anyio

WRITTEN = (
    "<!-- page 1 -->\n\nThe engine's perfor-\nmance is measured on **global**\nstate.\n\n"
    "<!-- page 2 -->\n\n|Name|Note|\n|---|---|\n|fz_new_context|allocate<br>context|\n\n"
    "道路交\n通法の一部を改正する"
)


async def _mentions(client: Any, alice: Any, terms: list[str]) -> dict[str, tuple[int, list[int]]]:
    found = await client.get(
        f"/api/projects/{alice.project.id}/mentions",
        params=[*(("terms", term) for term in terms), ("match", "any")],
        headers=bearer(alice.token),
    )
    assert found.status_code == 200, found.text
    counts: dict[str, tuple[int, list[int]]] = {}
    for document in found.json()["documents"]:
        for term in document["terms"]:
            occurrences, pages = counts.get(term["term"], (0, []))
            counts[term["term"]] = (occurrences + term["occurrences"], pages + term["pages"])
    return counts


async def test_phrases_match_across_line_breaks_hyphens_markup_and_cjk(
    app_client_without_worker: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    add_ready_markdown(db_url, alice.project.id, [("notes.pdf", WRITTEN)])

    counts = await _mentions(
        app_client_without_worker,
        alice,
        ["performance is measured on global state", "allocate context", "道路交通法", "FZ_NEW"],
    )

    assert counts == {
        "performance is measured on global state": (1, [1]),
        "allocate context": (1, [2]),
        "道路交通法": (1, [2]),
        "FZ_NEW": (1, [2]),
    }


@pytest.mark.skipif(not (CORPUS_DIR / "manifest.json").exists(), reason="no corpus")
async def test_the_pages_named_in_the_issue_are_found(
    app_client_without_worker: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    add_ready_markdown(
        db_url,
        alice.project.id,
        [
            ("mupdf_explored.pdf", page_markdown("long_100plus/mupdf_explored.pdf", 24, 24)),
            ("kampo.pdf", page_markdown("non_latin/kampo.pdf", 1, 1)),
        ],
    )

    counts = await _mentions(
        app_client_without_worker,
        alice,
        ["containing global state", "道路交通法施行令", "普通自転車"],
    )

    assert counts["containing global state"] == (1, [24])
    assert counts["道路交通法施行令"][0] >= 2 and counts["道路交通法施行令"][1] == [1]
    assert counts["普通自転車"][0] >= 5
