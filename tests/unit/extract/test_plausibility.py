"""Garbage text layers of any script are told from real text (samples written here; the
corpus's own layers are checked in tests/corpus/test_fidelity.py)."""

from __future__ import annotations

import pytest

from extract.ocr.plausibility import is_garbage, is_misread, is_odd, misread_share, tokens
from extract.ocr.trigrams import unlisted
from tests.unit.extract.samples import POOR_OCR

RUSSIAN_READ_AS_LATIN = (
    "Cl>opMa no KHA 1152017 Hanorosas:t AeKnapai...IVIs:t no Hanory, ynnal.IVIBaeMoMy "
    "B CBS'I3VI C npVIMeHeHVIeM ynpo~eHHOH CVICTeMbl Hanoroo6nO>KeHVIS'I HoMep KoppeKn1pOBKH "
    "H8norosbiH nepHOA (KoA) 0T48THbiH rO,[I npe,[ICT8BflH8TCH B H8nOrOBbiH opr8H (KOA) "
) * 3
GOOD = {
    "english": "The committee reviewed the proposal and found that it meets the requirements "
    "of the regulation, although several members asked for a longer consultation period. ",
    "german": "Die Kommission hat den Vorschlag geprüft und festgestellt, dass er den "
    "Anforderungen der Verordnung entspricht, obwohl mehrere Mitglieder eine längere Frist "
    "verlangten. ",
    "russian": "Комиссия рассмотрела предложение и установила, что оно соответствует "
    "требованиям регламента, хотя несколько членов попросили продлить срок консультаций. ",
    "arabic": "راجعت اللجنة الاقتراح ووجدت أنه يستوفي متطلبات اللائحة، على الرغم من أن عدة "
    "أعضاء طلبوا فترة تشاور أطول. ",
    "hebrew": "הוועדה בחנה את ההצעה ומצאה שהיא עומדת בדרישות התקנה, אף שכמה חברים ביקשו "
    "תקופת התייעצות ארוכה יותר. ",
    "chinese": "委员会审查了该提案，认为其符合条例的要求，但有几位成员要求延长协商期。",
    "japanese": "委員会は提案を審査し、規則の要件を満たしていると判断したが、数人の委員は協議期間の延長を求めた。",
    "korean": "위원회는 제안을 검토하고 규정의 요건을 충족한다고 판단했지만 여러 위원이 협의 기간 연장을 요청했다. ",
    "code": "Use fz_new_context(ctx, NULL, FZ_STORE_DEFAULT) to create the context; "
    "the LLMs and GPUs of v2.1 run on x86_64 with Qwen2-7B-Instruct and H2O. ",
    "math": "Let κn(s) = ⟨c″(s), Nor(s)⟩ be the normal curvature; then K(s) = κ1(s) κ2(s) "
    "for every point xP and yQ of the surface. ",
}


def test_a_russian_page_read_as_latin_is_garbage() -> None:
    assert is_garbage(RUSSIAN_READ_AS_LATIN)


@pytest.mark.parametrize("language", sorted(GOOD))
def test_real_text_of_any_script_is_not_garbage(language: str) -> None:
    assert not is_garbage(GOOD[language] * 6)


def test_word_shapes() -> None:
    assert [is_odd(word) for word in ("HoMep", "Hanoroo6nO", "Cl>opMa", "BCпрo")] == [True] * 4
    assert [is_odd(word) for word in ("LLMs", "Qwen2", "don't", "U.S.A", "κn", "Nor(s")] == [
        False
    ] * 6


def test_too_little_text_is_not_judged() -> None:
    assert not is_garbage("HoMep KoppeKn1pOBKH Cl>opMa")


def test_english_words_hold_english_trigrams_and_misread_ones_do_not() -> None:
    assert not [word for word in ("membership", "accepting", "enclosing", "the") if unlisted(word)]
    assert all(unlisted(word) for word in ("aieiabership", "esffiteersftip", "eneloalcg"))


def test_a_poor_english_ocr_layer_is_misread_and_real_english_is_not() -> None:
    assert is_misread(POOR_OCR)
    assert misread_share(tokens(GOOD["english"] * 6)) == 0.0
    assert not is_misread(GOOD["english"] * 6)


def test_other_languages_are_not_judged_by_english_trigrams() -> None:
    german = GOOD["german"] + "Grundstücksverkehrsgenehmigungszuständigkeitsübertragungsverordnung "
    assert not is_misread(german * 6)
