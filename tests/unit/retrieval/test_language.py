"""Language detection on real corpus files, and stemming each document in its own language."""

from __future__ import annotations

import pymupdf
import pytest

from retrieval.index import ChunkIndex
from retrieval.language import detect_language, script_counts
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SourceDocument
from tests.support.paths import CORPUS_DIR


def _first_pages(relative: str, pages: int = 3) -> str:
    """Plain text of a corpus file's first pages (fast; the language is in the words)."""
    with pymupdf.open(CORPUS_DIR / relative) as document:
        return "\n".join(document[n].get_text() for n in range(min(pages, len(document))))


@pytest.mark.skipif(
    not (CORPUS_DIR / "manifest.json").exists(), reason=f"no corpus under {CORPUS_DIR}"
)
@pytest.mark.parametrize(
    ("relative", "language"),
    [
        ("papers/fr_olap.pdf", "french"),
        ("long_100plus/GeoTopo-komprimiert.pdf", "german"),
        ("non_latin/chinese-tables.pdf", "chinese"),
        ("non_latin/kampo.pdf", "japanese"),
        ("non_latin/jo.pdf", "japanese"),
        ("tables/dotted-gridlines.pdf", "italian"),
        ("forms/test-2333.pdf", "spanish"),
        ("non_latin/russian.pdf", "russian"),
        ("papers_acl/P19-1164.pdf", "english"),
    ],
)
def test_corpus_files_are_detected_in_their_language(relative: str, language: str) -> None:
    assert detect_language(_first_pages(relative)) == language


def test_letters_are_counted_by_script_in_mixed_text() -> None:
    """ASCII letters count as Latin beside the accented ones; digits, punctuation and
    spaces count for no script."""
    text = "Ça va — naïve 42 café; Привет мир, 日本語のテキスト, 中文, 한국어, Ελλάδα, שלום, سلام"
    counts = script_counts(text)
    assert {script: n for script, n in counts.items() if n} == {
        "LATIN": 13, "CYRILLIC": 9, "HAN": 5, "KANA": 5, "HANGUL": 3, "GREEK": 6,
        "HEBREW": 4, "ARABIC": 4,
    }  # fmt: skip
    assert script_counts("plain ASCII, 7 words") == {"LATIN": 15}


def test_too_little_text_is_undecided() -> None:
    assert detect_language("") is None
    assert detect_language("12 345 67,8") is None
    assert detect_language("Metalloids 335 3900") is None  # a table row: no function words


def test_queries_in_a_language_are_detected() -> None:
    assert detect_language("Wie wird die Topologie eines Raumes definiert?") == "german"
    assert detect_language("How many cells are counted in the hot spot method?") == "english"
    assert detect_language("截至2023年3月末发行人授信额度总额是多少？") == "chinese"


FRENCH = SourceDocument(
    "fr",
    "olap.pdf",
    "f1",
    "<!-- page 1 -->\n# Résumés de logs\n\nNous proposons une méthode pour résumer et "
    "interroger des logs de requêtes OLAP. Les requêtes sont résumées par une algèbre simple, "
    "et une mesure évalue la qualité du résumé obtenu sur les données de l'entrepôt.\n",
)
ENGLISH = SourceDocument(
    "en",
    "notes.pdf",
    "e1",
    "<!-- page 1 -->\n# Query logs\n\nWe summarise the queries of a data warehouse and measure "
    "the quality of the summary; the colour of each cell shows its behaviour.\n",
)


def test_each_document_is_stemmed_in_its_own_language() -> None:
    index = ChunkIndex()
    index.add([FRENCH, ENGLISH])
    languages = {doc.ref.id: doc.language for doc in index.documents([FRENCH.ref, ENGLISH.ref])}
    assert languages == {"fr": "french", "en": "english"}
    # French inflections meet through the French stemmer ("requête" / "requêtes", "résumé").
    result = search(index, "requête résumée", [FRENCH.ref, ENGLISH.ref], reranker=NoReranker())
    assert [hit.document_id for hit in result.hits] == ["fr"]
    # The same index still stems English documents as English, with spellings folded.
    result = search(index, "summarize color behavior", [ENGLISH.ref], reranker=NoReranker())
    assert [hit.document_id for hit in result.hits] == ["en"]
    assert not result.warnings


def test_a_fixed_language_stems_every_document_with_it() -> None:
    index = ChunkIndex(language="english")
    index.add([FRENCH])
    (french,) = index.documents([FRENCH.ref])
    assert french.language == "english"


FRENCH_WITH_SUMMARY = FRENCH._replace(
    id="fr-summary",
    content_hash="f2",
    markdown=FRENCH.markdown
    + "\nLes résumés sont construits à partir des requêtes les plus fréquentes, et chaque "
    "résumé est évalué par sa couverture et par sa concision sur les données de l'entrepôt.\n"
    + "\n## Summary\n\nIn this paper we propose a method for the logs of a warehouse: it is "
    "the way it works and the results of it.\n",
)
FORM = SourceDocument(
    "form",
    "form.pdf",
    "e2",
    "<!-- page 1 -->\n# Form 1040NR\n\nThis form is for nonresident aliens who must file a "
    "return of their income in the United States. Its catalog number is 11364D, and it is "
    "printed on recycled paper by the Department of the Treasury.\n",
)


def test_a_question_in_english_does_not_match_english_stopwords_in_a_french_document() -> None:
    index = ChunkIndex()
    index.add([FRENCH_WITH_SUMMARY, FORM])
    refs = [FRENCH_WITH_SUMMARY.ref, FORM.ref]
    assert {doc.language for doc in index.documents(refs)} == {"french", "english"}
    result = search(index, "What is the catalog number of the form?", refs, reranker=NoReranker())
    assert [hit.document_id for hit in result.hits] == ["form"]
    # A French question still finds the French document through the French stemmer.
    result = search(index, "Quelle est la qualité du résumé ?", refs, reranker=NoReranker())
    assert result.hits[0].document_id == "fr-summary"
