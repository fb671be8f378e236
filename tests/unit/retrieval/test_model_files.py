"""The local model's files (#24, supply chain): the ONNX file is loaded only when it is the one
pinned by SHA-256, and the tokenizer shipped with Shortlist is the model's own."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import pytest

from retrieval.rerankers.embedder import (
    MODEL_SHA256,
    TOKENIZER_PATH,
    TOKENIZER_SHA256,
    MiniLMEmbedder,
    ModelFileMismatch,
    default_model_path,
    verified_model_bytes,
)
from retrieval.rerankers.local import LocalReranker
from retrieval.types import Candidate
from tests.support.paths import REPO_DIR


def _tampered_copy(tmp_path: Path) -> Path:
    """The installed model with one byte of its weights changed, as an attacker would."""
    copy = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    return copy


def test_the_installed_model_is_the_pinned_one() -> None:
    assert verified_model_bytes(default_model_path())
    assert hashlib.sha256(default_model_path().read_bytes()).hexdigest() == MODEL_SHA256


def test_a_tampered_model_is_refused_naming_both_digests_and_the_fix(tmp_path: Path) -> None:
    tampered = _tampered_copy(tmp_path)
    actual = hashlib.sha256(tampered.read_bytes()).hexdigest()
    with pytest.raises(ModelFileMismatch) as refused:
        MiniLMEmbedder(tampered)
    message = str(refused.value)
    assert MODEL_SHA256 in message and actual in message
    assert str(tampered) in message and "pip install --force-reinstall" in message


def test_a_reranker_given_a_tampered_model_ranks_by_bm25_and_says_why(tmp_path: Path) -> None:
    reranker = LocalReranker(model_path=_tampered_copy(tmp_path))
    candidates = [Candidate("a", "alpha text", 2.0), Candidate("b", "beta text", 1.0)]
    result = reranker.rerank("alpha", candidates, deadline=time.monotonic() + 5)
    assert not result.reranked and result.scores == [2.0, 1.0]
    assert "ModelFileMismatch" in result.warnings[0] and MODEL_SHA256 in result.warnings[0]


def test_the_tokenizer_ships_in_the_repository_unchanged() -> None:
    assert TOKENIZER_PATH.is_relative_to(REPO_DIR / "retrieval")
    assert hashlib.sha256(TOKENIZER_PATH.read_bytes()).hexdigest() == TOKENIZER_SHA256
    licence = (TOKENIZER_PATH.parent / "LICENSE").read_text(encoding="utf-8")[:300]
    assert "Apache License" in licence and "Version 2.0" in licence


def test_the_shipped_tokenizer_gives_the_token_ids_the_model_was_trained_on() -> None:
    """BERT uncased word-piece ids (bert-base-uncased's vocabulary, which all-MiniLM-L6-v2
    uses): [CLS] this is an example sentence [SEP], lower-cased and accent-kept as upstream."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    assert tokenizer.get_vocab_size() == 30522
    assert tokenizer.encode("This is an example sentence").ids == [
        101,
        2023,
        2003,
        2019,
        2742,
        6251,
        102,
    ]
    assert tokenizer.encode("Each sentence is converted").ids == [
        101,
        2169,
        6251,
        2003,
        4991,
        102,
    ]


def test_the_model_reads_the_shipped_tokenizer_ids_like_the_old_copy() -> None:
    """The model embeds with the shipped tokenizer: a sentence and its paraphrase are close,
    an unrelated one is not (the ids mean to the model what they meant in training)."""
    embedder = MiniLMEmbedder(intra_op_num_threads=1)
    assert embedder.tokenizer_path == TOKENIZER_PATH
    cat, kitten, bonds = embedder.embed(
        ["A cat sits on the mat.", "A kitten is sitting on a rug.", "Bond yields rose sharply."]
    )
    assert float(cat @ kitten) > 0.5 > float(cat @ bonds)
