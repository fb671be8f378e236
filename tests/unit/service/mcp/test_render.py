"""What the MCP tools tell a model about documents."""

from __future__ import annotations


def test_mcp_document_list_says_which_pages_were_recognised_from_images() -> None:
    from datetime import UTC, datetime
    from uuid import uuid4

    from service.mcp import render
    from service.mcp.tools import document_entry
    from service.records import Document, Project

    now = datetime.now(UTC)
    scan = Document(
        id=uuid4(),
        project_id=uuid4(),
        name="contract.pdf",
        content_type="application/pdf",
        size_bytes=1000,
        object_key="k",
        status="ready",
        error_code=None,
        error_message=None,
        kind="pdf",
        page_count=9,
        pages_done=None,
        pages_total=None,
        content_hash="h",
        warnings=(),
        created_at=now,
        extracted_at=now,
        ocr_pages=(3, 4, 5, 6, 7, 8, 9),
    )

    text = render.documents_text(Project(uuid4(), "legal", now), [scan])

    assert "ready, 9 page(s); text recognised from images on pages 3-9" in text
    assert document_entry(scan)["ocr_pages"] == [3, 4, 5, 6, 7, 8, 9]
