"""The API reference at /schema works with no internet: every asset comes from this service."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.browser.chromium import UI_TIMEOUT_MS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("path", ["/schema", "/schema/swagger"])
def test_api_reference_renders_from_local_assets_only(
    browser: Any, service_url: str, path: str
) -> None:
    origin = urlsplit(service_url).netloc
    foreign: list[str] = []
    page = browser.new_page()
    try:
        # Anything leaving this service is recorded and refused, as it would fail offline.
        def route(request_route: Any) -> None:
            url = request_route.request.url
            if urlsplit(url).netloc == origin or url.startswith("data:"):
                request_route.continue_()
            else:
                foreign.append(url)
                request_route.abort()

        page.route("**/*", route)
        page.goto(service_url + path)
        page.wait_for_selector(".swagger-ui .info .title", timeout=UI_TIMEOUT_MS)
        assert "Shortlist" in page.inner_text(".swagger-ui .info .title")
        # The operations are listed, so the OpenAPI document loaded too.
        page.wait_for_selector("#operations-search-SearchProject", timeout=UI_TIMEOUT_MS)
    finally:
        page.close()
    assert foreign == []


def test_openapi_document_is_json_at_the_documented_path(service_url: str) -> None:
    response = httpx.get(service_url + "/schema/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["info"]["title"] == "Shortlist"
    assert "/api/projects/{project_id}/search" in document["paths"]
