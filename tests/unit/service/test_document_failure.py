"""A failed document reads the same through every door: one code, message and hint."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from service.http.schemas import Document as DocumentBody
from service.mcp import render
from service.mcp.tools import document_entry
from service.records import Document
from service.services.documents import HINTS, failure_of


def _document(status: str, code: str | None, message: str | None) -> Document:
    return Document(
        id=uuid.uuid4(),
        project_id=uuid.uuid4(),
        name="scan.pdf",
        content_type="application/pdf",
        size_bytes=10,
        object_key="k",
        status=status,
        error_code=code,
        error_message=message,
        kind=None,
        page_count=None,
        pages_done=None,
        pages_total=None,
        content_hash=None,
        warnings=(),
        created_at=datetime.now(UTC),
        extracted_at=None,
    )


def test_a_failure_without_a_recorded_code_is_extraction_failed_in_rest_and_mcp() -> None:
    document = _document("error", None, "Extraction kept failing.")
    rest = DocumentBody.from_record(document).error
    mcp = document_entry(document)["error"]
    assert rest is not None
    assert (rest.code, rest.message, rest.hint) == (
        "extraction_failed",
        "Extraction kept failing.",
        None,
    )
    assert mcp == {"code": "extraction_failed", "message": "Extraction kept failing.", "hint": None}


def test_rest_mcp_and_the_mcp_text_show_the_same_hint() -> None:
    document = _document("error", "scanned_pdf", "No text layer.")
    failure = failure_of(document)
    assert failure is not None and failure.hint == HINTS["scanned_pdf"]
    rest = DocumentBody.from_record(document).error
    assert rest is not None and rest.hint == failure.hint
    assert document_entry(document)["error"]["hint"] == failure.hint
    assert (
        render.unsearchable_reason(document) == f"not searchable: No text layer. — {failure.hint}"
    )


def test_a_document_that_did_not_fail_has_no_failure() -> None:
    for status in ("pending", "processing", "ready"):
        document = _document(status, None, None)
        assert failure_of(document) is None
        assert DocumentBody.from_record(document).error is None
        assert document_entry(document)["error"] is None


def test_a_hint_never_repeats_what_its_code_default_message_says() -> None:
    import extract.errors as extract_errors

    messages = {
        cls.code: " ".join((cls.__doc__ or "").split())
        for cls in vars(extract_errors).values()
        if isinstance(cls, type) and isinstance(getattr(cls, "code", None), str)
    }
    for code, hint in HINTS.items():
        message = messages.get(code, "")
        words = {w.strip(".,:;()").lower() for w in hint.split() if len(w) > 4}
        repeated = {w for w in words if w in message.lower()}
        assert len(repeated) <= len(words) // 2, (code, repeated)


def test_a_refusal_naming_an_unsearchable_document_ends_with_one_full_stop() -> None:
    import pytest

    from service.errors import DocumentNotReady
    from service.services.documents import require_searchable

    document = _document("error", "corrupt_document", "The document is damaged.")
    with pytest.raises(DocumentNotReady) as refused:
        require_searchable(document)
    assert refused.value.message.endswith("upload it again.")
    assert ".." not in refused.value.message
