"""Reference lists and thin passages are demoted; look-alike documents are named."""

from __future__ import annotations

from retrieval.index import ChunkIndex
from retrieval.noise import THIN_TERMS, citation_density, demotion, look_alikes, thinness
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SourceDocument

REFERENCES = """\
- Karpukhin, V., Oguz, B. and Min, S. 2020. Dense passage retrieval for open-domain question \
answering. In Proceedings of EMNLP, pp. 6769-6781.
- Lee, K., Chang, M. and Toutanova, K. 2019. Latent retrieval for weakly supervised open domain \
question answering. In Proceedings of ACL.
- Robertson, S. and Zaragoza, H. 2009. The probabilistic relevance framework: BM25 and beyond. \
Foundations and Trends in Information Retrieval 3(4).
- [4] Xiong, L. et al. 2021. Approximate nearest neighbor negative contrastive learning for dense \
text retrieval. arXiv:2007.00808.
"""
BODY = (
    "Dense passage retrieval encodes questions and passages with two encoders and retrieves "
    "by inner product; it beats BM25 on open-domain question answering (Karpukhin et al., 2020), "
    "as our results in 2021 confirm."
)
PAPER = SourceDocument(
    "paper",
    "paper.pdf",
    "p1",
    f"<!-- page 1 -->\n# Method\n\n{BODY}\n\n<!-- page 9 -->\n# References\n\n{REFERENCES}",
)


def test_a_reference_list_reads_as_references_and_prose_does_not() -> None:
    assert citation_density(REFERENCES) >= 0.75
    assert citation_density(REFERENCES, "Paper > References") == 1.0
    assert citation_density(BODY) == 0.0  # an in-text citation is not a reference entry
    assert citation_density("Apples are crisp. Pears are soft.") == 0.0
    assert demotion(0.0) == 1.0 > demotion(1.0) > 0.0


def test_a_bibliography_passage_is_demoted_below_the_passage_that_answers() -> None:
    index = ChunkIndex(chunk_size=300)
    index.add([PAPER])
    query = "retrieval for open domain question answering"
    result = search(index, query, [PAPER.ref], reranker=NoReranker())
    assert result.hits[0].heading == "Method"
    reference_hits = [hit for hit in result.hits if hit.heading == "References"]
    assert reference_hits, "the reference list still comes back, just lower"
    # Undemoted, the reference entry (the same words, twice) would have won on BM25.
    assert max(hit.bm25 for hit in reference_hits) > result.hits[0].bm25
    assert all(hit.relevance < result.hits[0].relevance for hit in reference_hits)


def test_documents_sharing_most_passages_are_named_as_look_alikes() -> None:
    candidates = {"v1": {"a", "b"}, "v2": {"a", "b"}, "other": {"a"}, "solo": {"z"}}
    everything = {
        "v1": frozenset("abcd"),
        "v2": frozenset("abce"),
        "other": frozenset("axyz"),
        "solo": frozenset("z"),
    }
    found = look_alikes(["v1", "solo", "v1"], candidates, everything.__getitem__)
    assert found == {"v1": ("v2",)}


def test_search_names_the_look_alikes_of_a_cited_document() -> None:
    pages = [
        f"<!-- page {n} -->\n# Part {n}\n\nClause {n} of the lease covers rent item {n}.\n"
        for n in range(1, 7)
    ]
    v1 = SourceDocument("v1", "lease-2023.pdf", "a", "".join(pages))
    v2 = SourceDocument("v2", "lease-2024.pdf", "b", "".join(pages[:5]) + "<!-- page 6 -->\nNew.\n")
    other = SourceDocument("o", "fruit.pdf", "c", "<!-- page 1 -->\nApples and rent.\n")
    index = ChunkIndex(chunk_size=200)
    documents = [v1, v2, other]
    index.add(documents)
    result = search(index, "clause 3 rent", [d.ref for d in documents], reranker=NoReranker())
    named = {source.id: [ref.name for ref in source.look_alikes] for source in result.sources}
    assert named["v1"] == ["lease-2024.pdf"]
    assert named.get("v2", ["lease-2023.pdf"]) == ["lease-2023.pdf"]  # its copies collapse
    assert named.get("o", []) == []
    assert result.to_dict()["sources"][0]["look_alikes"]


def test_the_same_passage_in_two_documents_is_returned_once() -> None:
    text = "<!-- page 1 -->\n# Terms\n\nThe deposit is returned within 30 days of the lease end.\n"
    first = SourceDocument("a", "lease-a.pdf", "a", text)
    copy = SourceDocument("b", "lease-b.pdf", "b", text)
    index = ChunkIndex()
    index.add([first, copy])
    result = search(index, "deposit returned", [first.ref, copy.ref], reranker=NoReranker())
    assert [hit.document_id for hit in result.hits] == ["a"]
    assert [ref.name for ref in result.sources[0].look_alikes] == ["lease-b.pdf"]


def test_thinness_grows_as_a_passage_has_fewer_terms_than_its_competitors() -> None:
    assert thinness([0, THIN_TERMS // 2, THIN_TERMS, 200, 300]) == [1.0, 0.5, 0.0, 0.0, 0.0]
    # When most candidates are short, short is how the documents are: nothing is thin.
    assert thinness([3, 5, 8, 200]) == [0.0, 0.0, 0.0, 0.0]
    assert thinness([]) == []


_PARAGRAPH = (
    "Form 1040NR is filed by nonresident aliens who had income from sources in the United "
    "States. The catalog number printed at the foot of its first page is 11364D, and the form "
    "must be signed and dated by the taxpayer or an authorised agent before it is mailed to "
    "the service centre named in the instructions for the year of the return. "
)


def test_a_header_only_passage_ranks_below_the_paragraph_that_answers() -> None:
    markdown = (
        "<!-- page 1 -->\n# Catalog number\n\nForm 1040NR catalog number\n\n"
        "<!-- page 2 -->\n# Filing\n\n" + _PARAGRAPH * 3 + "\n"
    )
    document = SourceDocument("f", "f.pdf", "h", markdown)
    index = ChunkIndex()
    index.add([document])
    result = search(index, "Form 1040NR catalog number", [document.ref], reranker=NoReranker())
    assert [hit.pages for hit in result.hits[:2]] == [(2, 2), (1, 1)]
