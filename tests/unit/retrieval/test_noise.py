"""Reference lists and thin passages are demoted; look-alike documents are named."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

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


YEAR = re.compile(r"\b(1[89]|20)\d{2}[a-z]?\b")
ENTRY_WORDS = (
    "doi", "arxiv", "isbn", "issn", "pp.", "vol.", "proc.", "proceedings", "journal",
    "conference", "workshop", "transactions", "press", "publisher",
)  # fmt: skip
ENTRY_SIGN = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\[\d{1,3}\]|\d{1,3}\.\s|\(\d{1,3}\))"
    rf"|(?i:\b(?:{'|'.join(map(re.escape, ENTRY_WORDS))})\b)"
    r"|\b[A-Z][a-zà-ÿ'-]+,\s(?:[A-Z]\.\s?){1,3}"
    r"|(?:[A-Z][a-zà-ÿ'-]+,\s){2,}(?:and\s)?[A-Z]"
    r"|https?://|www\."
)
"""A reference entry's signs, as one pattern each: a year from 1800 to 2099 that starts a
word, and besides it a numbered start, an author's name, a publication word or an address."""


def reads_as_entry(piece: str) -> bool:
    return bool(YEAR.search(piece) and ENTRY_SIGN.search(piece))


def density_by_definition(text: str, heading: str = "") -> float:
    """:func:`citation_density` written with the patterns above: none unless the whole text
    reads as an entry or its heading says references; then the share of its lines (of its
    sentence-sized pieces, for a paragraph) that read as entries, at least 0.75 under such a
    heading."""
    says = bool(heading) and REFERENCE_HEADING.search(heading.rsplit(">", 1)[-1])
    if not says and not reads_as_entry(text):
        return 0.0
    pieces = [line for line in text.splitlines() if len(line.strip()) >= 25]
    if len(pieces) <= 2:
        pieces = [p for p in re.split(r"(?<=[.;])\s+(?=\[?\d|[A-Z])", text) if p.strip()]
    if not pieces:
        return 0.0
    density = sum(map(reads_as_entry, pieces)) / max(len(pieces), 3)
    return min(1.0, max(density, 0.5) + 0.25) if says else min(1.0, density)


REFERENCE_HEADING = re.compile(r"\b(references|bibliography)\b", re.IGNORECASE)
ENTRY_PARTS = st.sampled_from(
    [
        "2019", "1999a", "2101", "1799", "x2019", "_2020", "19", "20", "18", "[12] ", "12. ",
        "(3)", "- ", "* ", "Lee, K. ", "Lee, K.", "Ahn, Choi, and Bengio", "Ahn, Choi, ",
        "McDonald, ", "doi", "DOI", "Journal", "journals", "press", "Proc.", "pp. 5",
        "http://", "https:/", "www.", "www", " ", "  ", "\n", ".", ";", ",", "A", "b", "é",
        "É", "1", "2", "9", "0", "-", "'",
    ]
)  # fmt: skip

ENTRY_STARTS = st.sampled_from(["", "", "[12] ", " 3. ", "- (4) ", "* 12.x", "(1234) "])
"""How a text opens: as most do, or as a numbered entry (right or nearly)."""


@settings(max_examples=500, deadline=None)
@given(
    st.tuples(ENTRY_STARTS, st.lists(ENTRY_PARTS, max_size=16).map("".join)).map("".join),
    st.sampled_from(["", "Paper > References"]),
)
@example("2019 bLee, K. x", "")  # a name's capital inside a word
@example("2019 wwwx", "")  # an address's start without its dot
@example("b [12] 2019", "")  # a numbered start past the text's start
@example("2019 Ahn, Bx", "")  # one name before an initial, not a list of names
def test_citation_density_is_its_definition(text: str, heading: str) -> None:
    """However its scans are ordered and its patterns written for speed, a passage's density is
    what the definition's patterns give, within a line, across lines and across pieces."""
    assert citation_density(text, heading) == density_by_definition(text, heading)


def test_an_entry_word_reads_as_one_in_every_spelling_the_pattern_matches() -> None:
    """Each letter of a publication word, written as any character the definition's
    case-insensitive pattern takes for it ("DOI", "İSBN", "ıssn", "preſs", the Kelvin sign),
    makes a text with a year read as a reference entry, as the definition says."""
    every_character = "".join(map(chr, (*range(0xD800), *range(0xE000, 0x110000))))
    letters = {letter for word in ENTRY_WORDS for letter in word if letter.isalpha()}
    spellings = {letter: set(re.findall(f"(?i){letter}", every_character)) for letter in letters}
    assert {"İ", "ı"} <= spellings["i"] and "ſ" in spellings["s"] and "\u212a" in spellings["k"]
    for word in ENTRY_WORDS:
        for position, letter in enumerate(word):
            for spelled in spellings.get(letter, {letter}):
                after = "5" if word.endswith(".") else ""  # "pp." is a sign before a number
                text = f"{word[:position]}{spelled}{word[position + 1 :]}{after} 2019"
                assert citation_density(text) == density_by_definition(text) > 0, text


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
