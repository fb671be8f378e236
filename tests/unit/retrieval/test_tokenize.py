from __future__ import annotations

import threading

from retrieval.tokenize import Tokenizer, cjk_terms, fold_accents, fold_spelling


def test_accents_fold_on_latin_letters_only() -> None:
    assert fold_accents("café") == "cafe"
    assert fold_accents("ÉCOLE".casefold()) == "ecole"
    assert fold_accents("naïve") == "naive"
    assert fold_accents("हिन्दी") == "हिन्दी"  # Devanagari vowel signs are letters, not accents


def test_query_and_passage_terms_agree_across_case_width_and_accents() -> None:
    tokenizer = Tokenizer()
    assert tokenizer.query_terms("cafe") == tokenizer.document_terms("Café")
    assert tokenizer.query_terms("CAFÉ") == tokenizer.document_terms("cafe")
    assert tokenizer.query_terms("ｆｉｎａｎｃｅ") == tokenizer.document_terms("finance")


def test_english_words_are_stemmed_and_stopwords_dropped() -> None:
    tokenizer = Tokenizer()
    assert tokenizer.document_terms("The dog is running") == ["dog", "run"]
    assert tokenizer.query_terms("runs") == tokenizer.query_terms("running")


def test_a_language_without_a_stemmer_still_tokenises_without_stemming() -> None:
    tokenizer = Tokenizer("klingon")
    assert not tokenizer.stems
    assert tokenizer.document_terms("The Running Café") == ["the", "running", "cafe"]
    assert "nostem" in tokenizer.config


def test_the_language_changes_the_tokenizer_config() -> None:
    assert Tokenizer("english").config != Tokenizer("french").config


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert cjk_terms("机器学习", unigrams=False) == ["机器", "器学", "学习"]
    assert cjk_terms("猫", unigrams=False) == ["猫"]
    assert Tokenizer().query_terms("机器学习") == ["机器", "器学", "学习"]


def test_passages_also_index_cjk_unigrams_so_one_character_queries_match() -> None:
    tokenizer = Tokenizer()
    assert set(tokenizer.query_terms("猫")) <= set(tokenizer.document_terms("黑猫很可爱"))


def test_mixed_scripts_split_into_separate_words() -> None:
    terms = Tokenizer().document_terms("GPT模型 한국어 text")
    assert terms[0] == "gpt"
    assert "模型" in terms
    assert "한국" in terms
    assert "text" in terms


def test_tokenizer_is_safe_to_share_between_threads() -> None:
    tokenizer = Tokenizer()
    texts = [f"Running studies number {i} about cafés and 机器学习 {i * 3}" for i in range(300)]
    expected = [Tokenizer().document_terms(text) for text in texts]
    results: list[list[list[int]]] = []

    def work() -> None:
        results.append([tokenizer.document_term_ids(text) for text in texts])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    term_of_id = {tokenizer.term_id(term): term for row in expected for term in row}
    assert len(term_of_id) == tokenizer.vocabulary_size  # one id per distinct term
    assert len(results) == 4
    for ids in results:
        assert [[term_of_id[i] for i in row] for row in ids] == expected


def test_term_ids_number_the_same_terms_document_terms_gives() -> None:
    tokenizer = Tokenizer()
    text = "The runners were running to the Café; 机器学习 and 猫."
    ids = tokenizer.document_term_ids(text)
    assert ids == [tokenizer.term_id(term) for term in tokenizer.document_terms(text)]
    assert len(set(ids)) == len(set(tokenizer.document_terms(text)))
    assert tokenizer.document_term_ids(text) == ids
    assert tokenizer.term_id("zebra") is None


def test_query_terms_do_not_grow_the_vocabulary() -> None:
    tokenizer = Tokenizer()
    tokenizer.document_term_ids("apples and pears")
    size = tokenizer.vocabulary_size
    tokenizer.query_terms("completely unseen words 从未见过")
    assert tokenizer.vocabulary_size == size


def test_ascii_text_splits_into_the_same_words_on_its_fast_path() -> None:
    every_ascii = "".join(map(chr, range(128)))
    text = f"{every_ascii} Under_score v2.0 e-mail CAFE x86_64 {every_ascii[::-1]}"
    tokenizer = Tokenizer()

    ascii_terms = tokenizer.document_terms(text)
    # A non-ASCII word at the end takes the general path; the ASCII words must not change.
    general_terms = tokenizer.document_terms(text + " é")

    assert general_terms[: len(ascii_terms)] == ascii_terms
    assert general_terms[len(ascii_terms) :] == ["e"]
    assert tokenizer.document_terms("Under_score v2.0 e-mail CAFE x86_64") == [
        "under_scor",
        "v2",
        "0",
        "e",
        "mail",
        "cafe",
        "x86_64",
    ]


def test_british_and_american_spellings_meet() -> None:
    tokenizer = Tokenizer("english")
    assert tokenizer.query_terms("organisation colour analysed behaviours") == (
        tokenizer.document_terms("organization color analyzed behaviors")
    )
    assert fold_spelling("rise") == "rise"
    assert fold_spelling("four") == "four"
    assert Tokenizer("french").query_terms("colour") != tokenizer.query_terms("colour")


def test_vertical_cjk_text_split_by_line_breaks_still_forms_bigrams() -> None:
    tokenizer = Tokenizer("english")
    vertical = "横<br>断<br>歩<br>道\n を\n進行"
    assert set(tokenizer.query_terms("横断歩道")) <= set(tokenizer.document_terms(vertical))
    # Korean words are separated by spaces: they stay apart.
    assert "다학" not in tokenizer.document_terms("한국어 사용자는 하다 학교")


def test_derivational_forms_meet_in_english() -> None:
    tokenizer = Tokenizer("english")
    families = [
        ("conclude", "conclusion", "concluding", "conclusions", "conclusive"),
        ("summarize", "summary", "summaries", "summarise"),
        ("determine", "determinant", "determinants"),
        ("analysis", "analyze", "analyses"),
        ("decide", "decision"),
        ("introduce", "introduction"),
        ("describe", "description"),
    ]
    for family in families:
        assert len({term for word in family for term in tokenizer.query_terms(word)}) == 1, family


def test_derivation_keeps_unrelated_words_apart() -> None:
    tokenizer = Tokenizer("english")
    pairs = [("please", "plead"), ("incidence", "incision"), ("Claude", "clause")]
    for first, second in pairs:
        assert tokenizer.query_terms(first) != tokenizer.query_terms(second)
    # other languages are stemmed by Snowball alone
    assert Tokenizer("french").query_terms("conclure") != Tokenizer("french").query_terms(
        "conclusion"
    )
    assert Tokenizer("english", derivation=False).query_terms("conclude") == ["conclud"]


def test_word_terms_are_each_words_query_term_whether_remembered_or_not() -> None:
    tokenizer = Tokenizer()
    words = ["running", "the", "runs", "studies", "running", "café", "studies", "of"]
    expected = [next(iter(tokenizer.query_terms(word)), "") for word in words]
    first = tokenizer.word_terms(words)  # new words (repeated ones stemmed once)
    again = tokenizer.word_terms(words)  # every word remembered
    partly = tokenizer.word_terms([*words, "theories", "runs"])  # some new, some remembered
    assert first == again == expected
    assert partly == [*expected, "theori", expected[2]]
    assert expected[:3] == ["run", "", "run"]
