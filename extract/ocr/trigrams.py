"""English letter trigrams: which three-letter sequences occur in English words at all.

The table (``english_trigrams.txt``, one trigram a line, ``^`` and ``$`` marking
the start and end of a word) is derived from the WordPiece vocabulary of the
BERT-uncased tokenizer that Shortlist already ships for its reranker
(``retrieval/rerankers/data/all-MiniLM-L6-v2/tokenizer.json``; Apache-2.0): every
trigram of its whole-word entries written in ASCII letters (with both boundaries) and of its
word-piece entries (``##ing``: with the end boundary). It lists which trigrams occur, not how
often; a word holding one that is not listed is not an English word (``esffiteersftip``),
although some rare real words are not covered either (``taxable``).

Rebuild it with ``python -m extract.ocr.trigrams retrieval/rerankers/data/all-MiniLM-L6-v2/tokenizer.json``
(``extract`` reads only the table, never the tokenizer).
"""

from __future__ import annotations

import argparse
import json
from functools import cache
from pathlib import Path

__all__ = ["TABLE", "english_trigrams", "main", "unlisted", "word_trigrams"]

TABLE = Path(__file__).with_name("english_trigrams.txt")


def word_trigrams(word: str, *, start: bool = True) -> list[str]:
    """The trigrams of a lower-case word, with its boundaries (``^`` only when ``start``)."""
    marked = f"{'^' if start else ''}{word}$"
    return [marked[index : index + 3] for index in range(len(marked) - 2)]


@cache
def english_trigrams() -> frozenset[str]:
    """The table, read once per process."""
    return frozenset(TABLE.read_text(encoding="ascii").split())


def unlisted(word: str) -> bool:
    """Whether a lower-case ASCII word holds a trigram no English word has."""
    table = english_trigrams()
    return any(trigram not in table for trigram in word_trigrams(word))


def _build(tokenizer: Path) -> list[str]:
    vocabulary: dict[str, int] = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    found: set[str] = set()
    for entry in vocabulary:
        piece = entry.startswith("##")
        word = entry[2:] if piece else entry
        if len(word) >= 2 and word.isascii() and word.isalpha() and word.islower():
            found.update(word_trigrams(word, start=not piece))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("tokenizer", type=Path, help="a BERT-uncased tokenizer.json")
    arguments = parser.parse_args()
    TABLE.write_text("\n".join(_build(arguments.tokenizer)) + "\n", encoding="ascii")


if __name__ == "__main__":
    main()
