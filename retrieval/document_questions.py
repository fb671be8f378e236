"""Questions about a document as a whole, answered from the sections written to answer them.

"What does the paper conclude?", "what are the main findings?", "what are the
limitations?", "what is this document about?" share few words with the passage
that answers them: a conclusion rarely says "conclude", an abstract never says
"about". Each document states those answers under a heading (Conclusion,
Abstract, Summary, Limitations…), so a question of that kind
(:func:`document_question`: its words, question words and words naming the
document aside, are only such a request) ranks the passages under those
headings first (:func:`section_rank`), in the order the kind prefers them.

Headings are matched after the document's own language analysis (stemming), so
"Conclusions", "Concluding remarks", "Schlussfolgerungen" or "Résumé" are found
in a document of that language; the heading words of every language are listed
together, and each is stemmed by the tokenizer of the document being read.
"""

from __future__ import annotations

import re
import threading
from typing import Literal

from retrieval.answer_spans import QUESTION_WORDS
from retrieval.tokenize import Tokenizer, words_of

DocumentQuestion = Literal["conclusion", "findings", "limitations", "overview"]
"""What a document-level question asks for."""
Section = Literal["conclusion", "abstract", "limitations", "results"]
"""Kinds of section a document answers those questions in."""

SECTION_WORDS: dict[Section, str] = {
    "conclusion": """
        conclusion conclusions concluding remarks summary discussion outlook takeaways
        fazit zusammenfassung schlussfolgerung schlussfolgerungen schlussbemerkung
        schlussbemerkungen diskussion ausblick
        synthèse bilan perspectives
        conclusión conclusiones resumen discusión
        conclusioni riassunto sommario discussione
        conclusão conclusões resumo discussão considerações
        conclusie conclusies samenvatting discussie
        slutsats slutsatser sammanfattning diskussion konklusion konklusjon oppsummering
        sammendrag johtopäätökset yhteenveto заключение выводы итоги обсуждение sonuç özet
        """,
    "abstract": """
        abstract summary synopsis executive
        kurzfassung zusammenfassung résumé resumen sinopsis
        riassunto sommario resumo samenvatting sammanfattning sammendrag tiivistelmä
        аннотация реферат özet
        """,
    "limitations": """
        limitations limitation caveats shortcomings weaknesses threats validity
        limitationen einschränkungen grenzen limites limitaciones limitazioni
        limitações beperkingen begränsningar ограничения sınırlılıklar
        """,
    "results": """
        results findings evaluation experiments ergebnisse résultats resultados
        risultati resultaten resultat результаты bulgular
        """,
}
"""Heading words of each section kind, in the languages Snowball stems (and a few more)."""

ASKED: dict[DocumentQuestion, str] = {
    "conclusion": """
        conclude concludes concluded conclusion conclusions takeaway takeaways
        conclut conclusion conclusions fazit schluss concluye concluyen conclusión conclude
        """,
    "findings": """
        finding findings find found main key major principal primary results contribution
        contributions
        """,
    "limitations": """
        limitation limitations limit limits weakness weaknesses shortcoming shortcomings
        caveat caveats drawback drawbacks
        """,
    "overview": """
        about summary summarize summarise overview abstract gist topic topics purpose idea
        ideas point points
        """,
}
"""Words that, with question words and the document's name for itself, make a question
document-level; English, with the commonest forms of a few other languages."""

ANSWERED_BY: dict[DocumentQuestion, tuple[Section, ...]] = {
    "conclusion": ("conclusion", "abstract"),
    "findings": ("conclusion", "abstract", "results"),
    "limitations": ("limitations",),
    "overview": ("abstract", "conclusion"),
}
"""The sections that answer each kind of question, best first."""
ALSO_READ: dict[DocumentQuestion, tuple[Section, ...]] = {"limitations": ("conclusion",)}
"""Sections read next, that may answer (a conclusion often names limitations) but are not
the answer by their heading alone."""

_DOCUMENT_NOUNS = frozenset(
    words_of("""paper document article report study thesis text book manual guide chapter work
    authors author they we it this
    papier document article rapport étude dokument artikel bericht studie arbeit
    documento artículo informe estudio articolo studio rapporto""")
)
"""Words a question names the document (or its authors) with."""
_QUALIFIERS = frozenset(words_of("main key major principal primary overall general most important"))
_MAX_HEADING_TERMS = 5
"""A heading longer than this is a section about something, not "Conclusion"."""
_NUMBER_RE = re.compile(r"^[\divxlc.]+$")

_cache_lock = threading.Lock()
_section_terms: dict[tuple[str, Section], frozenset[str]] = {}


def document_question(query: str) -> DocumentQuestion | None:
    """What a question asks of a document as a whole, or ``None`` for any other question.

    Every word of the question must be a question word, a word the question names the
    document with, a qualifier (*main*, *key*) or a word asking for one kind
    (:data:`ASKED`); one kind must be asked for ("what are the main findings and the
    limitations" asks for two and is left to BM25).
    """
    words = [word for word in words_of(query) if not word.isdigit()]
    if not words or len(words) > 12:
        return None
    asked: set[DocumentQuestion] = set()
    for word in words:
        kinds = {kind for kind, listed in _ASKED_WORDS.items() if word in listed}
        if kinds:
            asked.update(kinds)
        elif word not in QUESTION_WORDS and word not in _DOCUMENT_NOUNS and not _filler(word):
            return None
    if "findings" in asked and len(asked) > 1:
        asked.discard("findings")  # "main results" of "the conclusion": the other one
    return asked.pop() if len(asked) == 1 else None


def section_rank(kind: DocumentQuestion, tokenizer: Tokenizer, heading: str) -> int | None:
    """Where a passage under ``heading`` (a breadcrumb) stands among the sections answering
    ``kind``, then those :data:`ALSO_READ` for it (0 best), or ``None`` when under none."""
    section = heading.rsplit(">", 1)[-1]
    terms = [term for term in tokenizer.query_terms(section) if not _NUMBER_RE.match(term)]
    if not terms or len(terms) > _MAX_HEADING_TERMS:
        return None
    for rank, wanted in enumerate((*ANSWERED_BY[kind], *ALSO_READ.get(kind, ()))):
        if _terms_of(tokenizer, wanted).intersection(terms):
            return rank
    return None


def answers(kind: DocumentQuestion, rank: int) -> bool:
    """Whether a section of :func:`section_rank` ``rank`` answers ``kind`` by its heading."""
    return rank < len(ANSWERED_BY[kind])


def _terms_of(tokenizer: Tokenizer, section: Section) -> frozenset[str]:
    key = (tokenizer.config, section)
    with _cache_lock:
        found = _section_terms.get(key)
    if found is None:
        found = frozenset(tokenizer.query_terms(SECTION_WORDS[section]))
        with _cache_lock:
            _section_terms[key] = found
    return found


def _filler(word: str) -> bool:
    """Articles, prepositions and qualifiers a document-level question may hold."""
    return word in _QUALIFIERS or word in _FILLER


_ASKED_WORDS: dict[DocumentQuestion, frozenset[str]] = {
    kind: frozenset(words_of(listed)) for kind, listed in ASKED.items()
}
_FILLER = frozenset(
    words_of("""a an the of in on to for from by with and or its their his her our your is are was
    were be been being has have had what's whats i me my us
    le la les l de du des d un une est sont ce cette ces qu que quoi quel quelle
    der die das des dem den ein eine ist sind hat
    el los las del un una es son lo il lo gli di è sono""")
)


SECTION_DOCUMENTS = 3
"""Documents whose answering sections a document-level question reads: the first ones BM25
ranks (in a project of one paper, that paper)."""
SECTION_PASSAGES = 4
"""Passages of one document's answering sections read at most (a long conclusion spans two)."""


def answering_sections(
    kind: DocumentQuestion, tokenizer: Tokenizer, headings: list[str]
) -> dict[int, int]:
    """Chunk ordinal -> :func:`section_rank` for the chunks (given by their headings, in
    order) under a section answering ``kind``, the best :data:`SECTION_PASSAGES` of them.
    For an overview, a document without an abstract is summed up by its opening passage."""
    ranks: dict[int, int] = {}
    seen: dict[str, int | None] = {}
    for ordinal, heading in enumerate(headings):
        if heading not in seen:
            seen[heading] = section_rank(kind, tokenizer, heading)
        rank = seen[heading]
        if rank is not None:
            ranks[ordinal] = rank
    if (
        kind == "overview"
        and headings
        and 0 not in ranks
        and not any(r == 0 for r in ranks.values())
    ):
        ranks[0] = len(ANSWERED_BY[kind])
    best = sorted(ranks, key=lambda ordinal: (ranks[ordinal], ordinal))[:SECTION_PASSAGES]
    return {ordinal: ranks[ordinal] for ordinal in sorted(best)}
