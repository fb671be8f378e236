import json
import random
from itertools import islice

from retrieval.answer_spans import answer_spans, sentences, term_weights, weighed_terms
from retrieval.highlights import matched_words
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SourceDocument
from tests.support.paths import SCIFACT_DIR

PASSAGE = (
    "Dense retrieval has been studied for years. How one can train it per query is open.\n"
    "We conclude that dense passage retrieval outperforms BM25 on open-domain QA. "
    "The retriever is trained with in-batch negatives. Scores are 0.5 and 3.2 in Table 2.\n"
    "| model | top-20 |\n|---|---|\n| DPR | 78.4 |\n"
)


def _document(markdown: str, name: str = "paper.pdf") -> SourceDocument:
    return SourceDocument(name, name, str(hash(markdown)), markdown)


def _spans(question: str, text: str = PASSAGE) -> list[str]:
    index = ChunkIndex()
    document = _document(f"<!-- page 1 -->\n# Paper\n\n{text}\n")
    indexed = index.documents([document.ref], add=[document])[0]
    tokenizer = index.tokenizer_for(indexed.language)
    weights = term_weights(tokenizer, weighed_terms(tokenizer, question), indexed.terms)
    marked = matched_words(tokenizer, text, tokenizer.query_terms(question))
    return [text[start:end] for start, end in answer_spans(tokenizer, text, marked, weights)]


def test_sentences_split_at_sentence_ends_and_lines_not_at_decimals_or_headings() -> None:
    text = f"# Heading\n{PASSAGE}"
    assert [text[start:end] for start, end in sentences(text)] == [
        "Dense retrieval has been studied for years.",
        "How one can train it per query is open.",
        "We conclude that dense passage retrieval outperforms BM25 on open-domain QA.",
        "The retriever is trained with in-batch negatives.",
        "Scores are 0.5 and 3.2 in Table 2.",
        "| model | top-20 |",
        "| DPR | 78.4 |",
    ]
    cjk = "機器學習很有趣。第二句。"
    assert [cjk[start:end] for start, end in sentences(cjk)] == ["機器學習很有趣。", "第二句。"]


def test_the_sentence_that_answers_is_marked_in_search_results() -> None:
    filler = "\n\n".join(f"Section {n} is about unrelated gardening matters." for n in range(6))
    document = _document(f"<!-- page 1 -->\n# Paper\n\n{PASSAGE}\n\n{filler}\n")
    result = search(
        ChunkIndex(), "what does the paper conclude?", [document.ref], reranker=NoReranker(),
        documents=[document],
    )  # fmt: skip
    best = result.hits[0]
    assert best.answer_text == (
        "We conclude that dense passage retrieval outperforms BM25 on open-domain QA."
    )
    assert all(best.text[start:end] in best.answer_text for start, end in best.answer_spans)


def test_question_words_never_pick_a_sentence() -> None:
    assert _spans("how can one per") == []
    assert _spans("how are negatives used in training?") == [
        "The retriever is trained with in-batch negatives."
    ]


def test_a_second_sentence_joins_when_it_holds_what_the_first_lacks() -> None:
    assert _spans("what scores are in Table 2, and what negatives train it?") == [
        "The retriever is trained with in-batch negatives.",
        "Scores are 0.5 and 3.2 in Table 2.",
    ]
    assert _spans("in-batch negatives") == ["The retriever is trained with in-batch negatives."]


def test_cjk_passages_get_spans_from_their_bigrams() -> None:
    text = "今日は晴れです。機械学習の研究をしています。明日は雨です。"
    assert _spans("機械学習", text) == ["機械学習の研究をしています。"]


def test_sentence_ends_are_found_where_the_defining_pattern_finds_them() -> None:
    from retrieval.answer_spans import _BOUNDARY_RE, _boundaries

    rng = random.Random(3)
    alphabet = "ab .!?。！？\n\t\u3000\u00a0x"
    texts = ["", "e.g. a 1.5 b. c!! d?\ne。f", *(
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(20_000)
    )]  # fmt: skip
    for text in texts:
        assert list(_boundaries(text)) == [m.span() for m in _BOUNDARY_RE.finditer(text)], text


def test_the_terms_each_sentence_holds_are_its_words_terms() -> None:
    from retrieval.answer_spans import _held_in_ascii
    from retrieval.tokenize import words_of

    rng = random.Random(5)
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        texts = [
            t for t in (json.loads(line)["text"] for line in islice(lines, 400)) if t.isascii()
        ]
    texts += ["a.b c. d\n\ne_1 f! x", "x", "word. word word_ word"]
    for text in texts:
        words = sorted(set(words_of(text)))
        # Whole words, and pieces of words that must not count as them.
        wanted = {w: f"t{n}" for n, w in enumerate(rng.sample(words, min(6, len(words))))}
        wanted.update(
            {w[:-1]: "piece" for w in rng.sample(words, min(3, len(words))) if len(w) > 1}
        )
        spans = sentences(text)
        expected = [
            {wanted[w] for w in wanted.keys() & set(words_of(text[start:end]))}
            for start, end in spans
        ]
        assert _held_in_ascii(text.lower(), spans, wanted) == expected, text
