"""Settings validation: a choice that cannot work is refused with what to set."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from service.settings import Settings


def _settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_the_cohere_reranker_without_a_key_is_refused_naming_the_key() -> None:
    with pytest.raises(ValidationError) as caught:
        _settings(search={"reranker": "cohere"}, cohere_api_key=None)
    message = str(caught.value)
    assert "needs COHERE_API_KEY" in message
    assert "SHORTLIST_SEARCH__RERANKER=cohere" in message


def test_a_blank_cohere_key_counts_as_missing() -> None:
    with pytest.raises(ValidationError, match="needs COHERE_API_KEY"):
        _settings(search={"reranker": "cohere"}, cohere_api_key="   ")


def test_the_cohere_reranker_with_a_key_is_accepted() -> None:
    settings = _settings(search={"reranker": "cohere"}, cohere_api_key="k")
    assert settings.reranker_kind == "cohere"
    assert settings.require_cohere_api_key() == "k"


def test_auto_chooses_local_without_a_key_and_cohere_with_one() -> None:
    assert _settings(cohere_api_key=None).reranker_kind == "local"
    assert _settings(cohere_api_key=SecretStr("k")).reranker_kind == "cohere"
    assert _settings(cohere_api_key=SecretStr(" ")).reranker_kind == "local"


def test_an_unknown_reranker_is_refused_listing_the_choices() -> None:
    with pytest.raises(ValidationError, match="'auto', 'cohere', 'local' or 'none'"):
        _settings(search={"reranker": "bm42"})
