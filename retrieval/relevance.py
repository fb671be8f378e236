"""Absolute relevance of a passage, and the verdict "the documents do not answer this".

A reranker's fused ``score`` is min-max normalised within the candidates, so
the best candidate of any query scores near 1, even for a query nothing
answers; it is good for ordering and says nothing about evidence. This module
turns signals that do mean the same across queries into a relevance in
[0, 1]:

* ``coverage``: the IDF-weighted share of the query's distinct terms the
  passage contains (:func:`retrieval.shortlist.term_coverage`);
* ``cosine``: the raw cosine similarity of the query and passage embeddings
  (the local reranker);
* Cohere's ``relevance_score``, already absolute: used as it is.

Each estimate is a logistic regression (Cox, "The regression analysis of
binary sequences", JRSS B 1958) of "this passage is relevant" on those
signals, fitted with balanced classes by ``bench/tune_relevance.py`` on
SciFact's *train* split only (150 sampled queries x BM25's top 10 passages,
215 of 1,500 relevant)::

    estimate                    weights        bias    AUC
    LEXICAL (coverage)          5.58           -2.71   0.808
    LOCAL (cosine, coverage)    6.13, 3.35     -4.83   0.891

The evidence floor is chosen on the tuning fold of the development set
``bench/data/corpus_dev.jsonl`` (#25: 122 answerable and 33 unanswerable
questions over 46 corpus documents, 13 of the unanswerable ones near misses),
never on its test fold, through the real pipeline (``bench/verdict.py``): the
floor on the best shown relevance is the highest that wrongly flags at most 5 %
of the answerable questions (LOCAL: 4.9 %, flagging 48 % of the unanswerable
ones; LEXICAL: 4.9 %, flagging 30 %). No floor there flags 80 % of the
unanswerable questions without flagging more than a third of the answerable
ones, and no other signal at hand made a better verdict: a logistic rule over
the best relevance with the best passage's coverage, the share of the query's
weight no passage holds, the best cosine, and whether BM25 and the embedding
agree on the document, cross-validated on the same fold, flagged no more
unanswerable questions at the same 5 % (``docs/benchmarks.md``). The answerable
questions below the floor are the ones the search does not find either (English
questions about Korean, Japanese and Italian pages; a Russian scan): coverage
and a bi-encoder's cosine do not tell "the topic is here" from "the answer is
here" (the near misses). Each bias is shifted so that its floor lands on
:data:`EVIDENCE_FLOOR` = 0.5: relevance 0.5 means "just enough evidence"
whichever reranker ran.

Cohere's ``relevance_score`` is used as it is, with the same floor; it was
not tuned here (no API key in the development environment).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

RelevanceLabel = Literal["high", "medium", "low"]
"""A relevance in words, for people: see :func:`relevance_label`."""


class Calibration(NamedTuple):
    """``sigmoid(bias + sum(weight * feature))``."""

    weights: tuple[float, ...]
    bias: float

    def __call__(self, *features: float) -> float:
        if len(features) != len(self.weights):
            raise ValueError(f"expected {len(self.weights)} features, got {len(features)}")
        return sigmoid(self.bias + sum(w * x for w, x in zip(self.weights, features, strict=True)))


LEXICAL = Calibration(weights=(5.58,), bias=-1.51)
"""Relevance from ``coverage`` alone: BM25 order, or a passage the model did not score.
Fitted bias -2.71; shifted by +0.85 (the #15 floor), then by +0.62 = -logit(0.35) on the
tuning fold of the #25 development set, then by -0.27 = -logit(0.567) on that fold through
the pipeline (#25, round 3: ``bench/verdict.py``), so that its floor sits at 0.5."""

LOCAL = Calibration(weights=(6.13, 3.35), bias=-2.30)
"""Relevance from ``(cosine, coverage)``: the local reranker (MiniLM cosine, 256 word pieces;
the fit at 256 gave the same weights, 6.12 and 3.35). Fitted bias -4.83; shifted by +1.10 (the
#15 floor), then by +2.20 = -logit(0.10) on the tuning fold of the #25 development set, then
by -0.77 = -logit(0.684) on that fold through the pipeline (#25, round 3:
``bench/verdict.py``), so that its floor sits at 0.5."""

EVIDENCE_FLOOR = 0.5
"""A passage below this relevance is not evidence; a result with none above it is
``insufficient_evidence``. Each estimate's bias is shifted so that its floor chosen on the
development set lands here, which makes the floor one number for every reranker."""

HIGH_RELEVANCE = 0.8
"""From here up a relevance reads as ``"high"``; from :data:`EVIDENCE_FLOOR` up ``"medium"``."""


SECTION_RELEVANCE = HIGH_RELEVANCE
"""The least relevance of a passage under the section a document-level question asks for
("what does the paper conclude?" and the Conclusion: :mod:`retrieval.document_questions`):
that section is the document's own answer, whatever words it shares with the question."""


def sigmoid(value: float) -> float:
    """``1 / (1 + e^-value)``, without overflow for large ``|value|``."""
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exponential = math.exp(value)
    return exponential / (1.0 + exponential)


KEY_COVERAGE = 0.8
"""A passage holds the question's key terms (or their close forms: the same stems) when they
make up at least this share of the question's idf weight (``coverage``). On SciFact train,
79 % of BM25's top-10 passages with this coverage are relevant (``bench/tune_relevance.py``,
the precision table): the lowest threshold with about four in five."""

CONFIDENT_COSINE = 0.75
"""A MiniLM cosine (256 word pieces) from which the embedding is confident: on SciFact train,
80 % of BM25's top-10 passages this close to their query are relevant, the lowest threshold
with four in five (``bench/tune_relevance.py``, the precision table)."""


def lexical_relevance(coverage: float) -> float:
    """Relevance of a passage from its query-term coverage alone, ``high`` only when it holds
    the question's key terms (:func:`earned`)."""
    return earned(LEXICAL(coverage), coverage)


def local_relevance(cosine: float, coverage: float) -> float:
    """Relevance of a passage from its embedding cosine and its query-term coverage, ``high``
    only when it holds the key terms or the embedding is confident (:func:`earned`)."""
    return earned(LOCAL(cosine, coverage), coverage, cosine)


def earned(relevance: float, coverage: float, cosine: float | None = None) -> float:
    """``relevance``, kept just under :data:`HIGH_RELEVANCE` unless the passage holds the
    question's key terms (:data:`KEY_COVERAGE`) or the embedding is confident
    (:data:`CONFIDENT_COSINE`): a calibrated estimate can be high from many weak signals (a
    title page sharing the paper's topic words), and "high" should say "this answers it"."""
    if relevance < HIGH_RELEVANCE or coverage >= KEY_COVERAGE:
        return relevance
    if cosine is not None and cosine >= CONFIDENT_COSINE:
        return relevance
    return _JUST_BELOW_HIGH


_JUST_BELOW_HIGH = HIGH_RELEVANCE - 0.01


def clamp(value: float) -> float:
    """``value`` within [0, 1]; NaN becomes 0 (no evidence)."""
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def insufficient_evidence(relevances: Sequence[float], floor: float = EVIDENCE_FLOOR) -> bool:
    """True when no relevance reaches ``floor`` (and when there are none)."""
    return not any(relevance >= floor for relevance in relevances)


def relevance_label(relevance: float) -> RelevanceLabel:
    """``"high"`` from :data:`HIGH_RELEVANCE`, ``"medium"`` from the floor, else ``"low"``."""
    if relevance >= HIGH_RELEVANCE:
        return "high"
    if relevance >= EVIDENCE_FLOOR:
        return "medium"
    return "low"
