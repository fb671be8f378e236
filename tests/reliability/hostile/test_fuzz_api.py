"""Promise 2, fuzzed: every REST operation, fed schema-driven and malformed input, never answers 5xx.

Schemathesis generates requests from the app's own OpenAPI schema (positive
and negative cases) and sends them, with a valid Bearer token, to the app
served by uvicorn. Path ids are swapped for the user's real project and
document (except for DELETE) so requests get past the 404 and into the
handlers. Every 4xx must be the JSON error envelope.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from tests.reliability.hostile.conftest import Target
from tests.reliability.isolation.operations import SCHEMA

schema = schemathesis.openapi.from_dict(SCHEMA)

EXAMPLES_PER_OPERATION = 25


def _use_real_ids(case: Any, target: Target) -> None:
    if case.method == "DELETE" or not case.path_parameters:
        return
    real = {"project_id": target.project_id, "document_id": target.document_id}
    for name in case.path_parameters:
        if name in real:
            case.path_parameters[name] = real[name]


@pytest.mark.timeout(120)
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_a_server_error(case: Any, target: Target) -> None:
    _use_real_ids(case, target)
    response = case.call(
        base_url=target.url, headers={"Authorization": f"Bearer {target.token}"}, timeout=30
    )
    case.validate_response(response, checks=[not_a_server_error])
    if response.status_code >= 400:
        body = response.json()
        assert body["status"] == response.status_code, body
        assert body["code"] and body["message"], body
