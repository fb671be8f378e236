"""Promise 2 for names: any script is kept as given, a path under a folder too; absolute and
escaping paths, controls and overlong names are refused.

Upload file names go through :func:`service.services.filenames.clean_filename` at grant
time; project names through the project service. Either way the answer is a
201 with the name as the user wrote it (NFC), or a 4xx in the JSON envelope.
"""

from __future__ import annotations

import unicodedata
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.reliability.hostile.conftest import Target
from tests.reliability.hostile.test_malformed_requests import assert_envelope

pytestmark = pytest.mark.timeout(60)

KEPT_NAMES = {
    "rtl": "تقرير الربع الثالث.md",
    "hebrew-mixed": "דוח 2024 final.md",
    "zero-width-joiner": "family\u200d\U0001f468\u200d\U0001f469.md",
    "zero-width-space": "split\u200bword.md",
    "cjk": "会議の議事録.md",
    "combining": "cafe\u0301.md",
    "emoji": "notes \U0001f4c4.md",
    "255-characters": "n" * 252 + ".md",
    "folder": "reports/q3.md",
    "folders-in-any-script": "تقارير/2024/会議.md",
    "255-characters-per-part": "f" * 255 + "/" + "n" * 252 + ".md",
}

REFUSED_NAMES = {
    "1000-characters": "n" * 997 + ".md",
    "parent-path": "../../etc/passwd",
    "parent-inside": "reports/../q3.md",
    "absolute": "/etc/passwd.md",
    "drive": "C:/reports/q3.md",
    "empty-part": "reports//q3.md",
    "dot-part": "reports/./q3.md",
    "trailing-slash": "reports/",
    "backslash": "reports\\q3.md",
    "dot-dot": "..",
    "blank": "   ",
    "bidi-override": "report\u202edm.exe",
    "nul": "a\x00b.md",
    "newline": "a\nb.md",
}


def _grant(client: httpx.Client, target: Target, filename: str) -> httpx.Response:
    return client.post(
        "/api/uploads",
        json={
            "project_id": target.project_id,
            "filename": filename,
            "size": 12,
            "content_type": "text/markdown",
        },
    )


@pytest.mark.parametrize("name", KEPT_NAMES.values(), ids=KEPT_NAMES.keys())
def test_a_unicode_file_name_is_kept_as_written(target: Target, name: str) -> None:
    data = b"# Notes\n\nok\n"
    with target.client() as client:
        granted = _grant(client, target, name)
        assert granted.status_code == 201, granted.text
        grant: dict[str, Any] = granted.json()
        url = urlsplit(grant["url"])
        sent = client.put(f"{url.path}?{url.query}", content=data, headers=grant["headers"])
        assert sent.status_code == 201, sent.text
        created = client.post(
            "/api/documents",
            json={"project_id": target.project_id, "upload_id": grant["upload_id"]},
        )
        assert created.status_code == 201, created.text
        listed = client.get(f"/api/projects/{target.project_id}/documents").json()
        client.delete(f"/api/documents/{created.json()['id']}")

    assert created.json()["name"] == unicodedata.normalize("NFC", name)
    assert created.json()["name"] in [d["name"] for d in listed["documents"]]


@pytest.mark.parametrize("name", REFUSED_NAMES.values(), ids=REFUSED_NAMES.keys())
def test_a_file_name_that_is_a_path_control_or_too_long_is_invalid_filename(
    target: Target, name: str
) -> None:
    with target.client() as client:
        response = _grant(client, target, name)
    assert_envelope(response, 400, "invalid_filename")


def test_a_file_name_past_the_schema_limit_is_a_400(target: Target) -> None:
    with target.client() as client:
        response = _grant(client, target, "n" * 5000 + ".md")
    assert_envelope(response, 400)


@pytest.mark.parametrize(
    "name",
    ["مشروع البحث", "פרויקט", "team\u200dnotes", "研究", "📚 reading"],
    ids=["arabic", "hebrew", "zero-width-joiner", "cjk", "emoji"],
)
def test_a_unicode_project_name_is_kept_as_written(target: Target, name: str) -> None:
    with target.client() as client:
        created = client.post("/api/projects", json={"name": name})
        assert created.status_code == 201, created.text
        fetched = client.get(f"/api/projects/{created.json()['id']}")
    assert fetched.json()["name"] == name


@pytest.mark.parametrize(
    "name",
    ["p" * 1000, "a\x00b", "   ", "a\nb", "evil\u202eanme"],
    ids=["1000-characters", "nul", "blank", "newline", "bidi-override"],
)
def test_a_project_name_that_is_too_long_blank_or_has_controls_is_a_400(
    target: Target, name: str
) -> None:
    with target.client() as client:
        response = client.post("/api/projects", json={"name": name})
    assert_envelope(response, 400)
