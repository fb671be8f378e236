"""Near-copy passages show once, and the hit says where the folded copies are."""

from __future__ import annotations

import pymupdf
import pytest

from retrieval.citations import near_copies_note
from retrieval.index import ChunkIndex
from retrieval.near_duplicates import NEAR_COPY_JACCARD, collapse, jaccard, shingles, words
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SourceDocument
from tests.support.paths import CORPUS_DIR

WHO = CORPUS_DIR / "long_100plus" / "test-3820.pdf"

LEASE = (
    "The tenant {name} shall pay a monthly rent of {rent} dollars on the first day of each "
    "month to the landlord at the address given above. A payment more than five days late "
    "incurs a fee of {fee} dollars. The deposit is returned within thirty days of the end "
    "of the lease, less the cost of repairing any damage beyond ordinary wear and tear."
)


def _page(n: int, text: str) -> str:
    return f"<!-- page {n} -->\n{text}\n\n"


def _modular_update_paragraphs() -> tuple[str, str]:
    """The WHO guideline says the same about its "modular update" on p. 26 and p. 33, in
    slightly different words (real text, as PyMuPDF reads it)."""
    found = []
    with pymupdf.open(WHO) as pdf:
        for page in (26, 33):
            text = pdf[page - 1].get_text()
            start = text.index("Overall, this guideline update")
            end = text.index("relevant guidance.", start) + len("relevant guidance.")
            found.append(" ".join(text[start:end].split()))
    return found[0], found[1]


def test_words_drop_case_punctuation_and_markdown_and_split_cjk() -> None:
    assert words("**Table 2** | F1 — 0.91; “Recall”") == ["table", "2", "f1", "0", "91", "recall"]
    assert words("参考文献 list") == ["参", "考", "文", "献", "list"]
    assert words("|a<br>b<sup>2</sup>|") == ["a", "b", "2"]


def test_template_siblings_are_near_copies_and_different_passages_are_not() -> None:
    one = LEASE.format(name="Ann Lee", rent="1,200", fee="50")
    sibling = LEASE.format(name="Bo Chen", rent="1,450", fee="60")
    other = (
        "The landlord keeps the common areas clean and lit, repairs the heating within two "
        "days of a written request, and gives a day's notice before entering the flat."
    )
    assert jaccard(shingles(one), shingles(sibling)) >= NEAR_COPY_JACCARD
    assert jaccard(shingles(one), shingles(other)) < 0.1
    assert jaccard(shingles(one), shingles(one)) == 1.0
    assert jaccard(frozenset(), shingles(one)) == 0.0


@pytest.mark.skipif(not WHO.exists(), reason=f"no corpus file {WHO}")
def test_a_real_paragraph_repeated_in_other_words_is_a_near_copy() -> None:
    first, second = _modular_update_paragraphs()
    assert first != second
    assert jaccard(shingles(first), shingles(second)) >= NEAR_COPY_JACCARD


def test_collapse_keeps_the_best_ranked_copy_and_still_fills_the_limit() -> None:
    texts = [
        LEASE.format(name="Ann Lee", rent="1,200", fee="50"),
        "Pets are allowed with the landlord's written consent.",
        LEASE.format(name="Bo Chen", rent="1,450", fee="60"),
        LEASE.format(name="Ann Lee", rent="1,200", fee="50"),
        "The heating is serviced every autumn.",
    ]
    keys = ["a", "b", "c", "a", "e"]
    kept = collapse([0, 1, 2, 3, 4], keys.__getitem__, texts.__getitem__, limit=3)
    assert [folded.position for folded in kept] == [0, 1, 4]
    (sibling, similarity), (identical, same) = kept[0].copies
    assert (sibling, identical, same) == (2, 3, 1.0)
    assert NEAR_COPY_JACCARD <= similarity < 1.0
    assert collapse([0, 1, 2, 3, 4], keys.__getitem__, texts.__getitem__, limit=1) == [
        kept[0]._replace(copies=())
    ]  # reads no further than it must


@pytest.mark.skipif(not WHO.exists(), reason=f"no corpus file {WHO}")
def test_search_folds_a_repeated_paragraph_and_names_its_page() -> None:
    first, second = _modular_update_paragraphs()
    guideline = SourceDocument(
        "who",
        "hcv-guidelines.pdf",
        "w",
        _page(26, f"# Introduction\n\n{first}")
        + _page(27, "# Scope\n\nThe guidelines cover testing, treatment and care of adults.")
        + _page(33, f"# Methodology\n\n{second}"),
    )
    index = ChunkIndex(chunk_size=900)
    index.add([guideline])
    result = search(
        index, "modular update on hepatitis C testing", [guideline.ref], reranker=NoReranker()
    )
    (top, *rest) = result.hits
    assert top.pages in ((26, 26), (33, 33))
    (copy,) = top.near_copies
    assert {top.pages, copy.pages} == {(26, 26), (33, 33)}
    assert (copy.document_id, copy.document_name) == ("who", "hcv-guidelines.pdf")
    assert all("modular" not in hit.text for hit in rest)  # shown once
    assert near_copies_note(top.near_copies) == (
        f"1 near-copy folded: hcv-guidelines.pdf p. {copy.pages[0]}"
    )


def test_search_folds_another_versions_passage_and_exact_copies_across_documents() -> None:
    lease = LEASE.format(name="Ann Lee", rent="1,200", fee="50")
    documents = [
        SourceDocument("a", "lease-ann.pdf", "1", _page(1, lease) + _page(2, "Pets: none.")),
        SourceDocument(
            "b", "lease-bo.pdf", "2", _page(3, LEASE.format(name="Bo Chen", rent="1,450", fee="60"))
        ),
        SourceDocument("c", "lease-ann-copy.pdf", "3", _page(1, lease)),
    ]
    index = ChunkIndex()
    index.add(documents)
    result = search(
        index, "late rent fee deposit", [d.ref for d in documents], reranker=NoReranker()
    )
    (top,) = [hit for hit in result.hits if "deposit" in hit.text]  # shown once
    assert top.document_name == result.hits[0].document_name
    shown = {(top.document_name, top.pages)} | {(c.document_name, c.pages) for c in top.near_copies}
    assert shown == {
        ("lease-ann.pdf", (1, 1)), ("lease-bo.pdf", (3, 3)), ("lease-ann-copy.pdf", (1, 1))
    }  # fmt: skip
    assert sorted(c.similarity for c in top.near_copies)[-1] == 1.0  # the exact copy
    assert result.to_dict()["results"][0]["near_copies"] == [c.to_dict() for c in top.near_copies]
