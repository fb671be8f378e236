"""Promise 2 for declared content types: the grant takes a media type or nothing.

A declared type went into the grant (the store pinned it) and the upload's row, so NUL
gave a 500 (``psycopg.DataError``) and CR/LF was accepted (issue #13). Now it is checked
as an RFC 9110 media type at ``POST /api/uploads``: NUL, CR/LF and anything else that is
not ``type/subtype[; name=value]`` are 400 ``invalid_content_type``; a valid declaration
only picks a kind (after the extension), and the grant pins that kind's own type.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.reliability.hostile.conftest import Target
from tests.reliability.hostile.test_malformed_requests import assert_envelope

pytestmark = pytest.mark.timeout(60)

NOTES = b"# Notes\n\nThe tide turned at noon.\n"

REFUSED_TYPES = {
    "nul": "text/markdown\x00",
    "nul-inside": "text/mark\x00down",
    "crlf-header-injection": "text/markdown\r\nX-Injected: yes",
    "lf": "text/markdown\n",
    "cr": "text/\rmarkdown",
    "tab-inside": "text/\tmarkdown",
    "no-subtype": "text/",
    "no-type": "/markdown",
    "no-slash": "markdown",
    "two-slashes": "text/mark/down",
    "words": "a text file, please",
    "non-ascii": "tëxt/markdown",
    "empty-parameter": "text/markdown;",
    "parameter-without-value": "text/markdown; charset",
    "unterminated-quote": 'text/markdown; charset="utf-8',
    "delete-character": "text/markdown\x7f",
    "bidi-override": "text/\u202emarkdown",
}

ACCEPTED_TYPES = {
    "plain": "text/markdown",
    "parameter": "text/markdown; charset=utf-8",
    "quoted-parameter": 'text/markdown; variant="GFM 0.29"',
    "surrounding-blanks": "  text/markdown\t",
    "generic": "application/octet-stream",
    "another-kind": "text/plain",
    "hostile": "image/svg+xml",
}
"""Declared types a grant is given for; whichever it was, the grant pins the type of the
kind the name declares (``tide.md``: Markdown)."""


def grant(client: httpx.Client, target: Target, content_type: str | None) -> httpx.Response:
    return client.post(
        "/api/uploads",
        json={
            "project_id": target.project_id,
            "filename": "tide.md",
            "size": len(NOTES),
            "content_type": content_type,
        },
    )


@pytest.mark.parametrize("content_type", REFUSED_TYPES.values(), ids=REFUSED_TYPES.keys())
def test_a_content_type_that_is_not_a_media_type_is_refused_at_the_grant(
    target: Target, content_type: str
) -> None:
    with target.client() as client:
        response = grant(client, target, content_type)

    assert_envelope(response, 400, "invalid_content_type")
    assert "media type" in response.json()["message"]


@pytest.mark.parametrize("declared", ACCEPTED_TYPES.values(), ids=ACCEPTED_TYPES.keys())
def test_a_media_type_is_granted_but_the_grant_pins_the_kinds_own_type(
    target: Target, declared: str
) -> None:
    with target.client() as client:
        granted = grant(client, target, declared)
        assert granted.status_code == 201, granted.text
        body: dict[str, Any] = granted.json()
        url = urlsplit(body["url"])
        sent = client.put(f"{url.path}?{url.query}", content=NOTES, headers=body["headers"])

    assert body["headers"]["Content-Type"] == "text/markdown"
    assert sent.status_code == 201, sent.text


def test_no_content_type_lets_the_file_name_decide(target: Target) -> None:
    with target.client() as client:
        response = grant(client, target, None)
        blank = grant(client, target, "   ")

    assert response.status_code == 201, response.text
    assert response.json()["headers"]["Content-Type"] == "text/markdown"
    assert blank.status_code == 201, blank.text
    assert blank.json()["headers"]["Content-Type"] == "text/markdown"
