"""The REST operations the app publishes, read from its own OpenAPI schema.

Tests build on this list instead of a hand-kept one, so a route added to the
app is covered (or makes a completeness test fail) without anyone remembering.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from service.app import create_app
from tests.conftest import make_settings

HTTP_METHODS = ("get", "put", "post", "delete", "patch")


class Operation(NamedTuple):
    method: str
    path: str
    operation_id: str
    path_params: tuple[str, ...]
    query_params: dict[str, bool]
    """Query parameter names, each with whether it is required."""
    has_body: bool


def openapi_schema() -> dict[str, Any]:
    """The app's OpenAPI document; building the app opens no connection."""
    with tempfile.TemporaryDirectory(prefix="shortlist-schema-") as scratch:
        app = create_app(make_settings("postgresql://unused@127.0.0.1:1/unused", Path(scratch)))
        schema: dict[str, Any] = app.openapi_schema.to_schema()
    return schema


def operations(schema: dict[str, Any]) -> list[Operation]:
    found = []
    for path, item in schema["paths"].items():
        for method in HTTP_METHODS:
            if method not in item:
                continue
            spec = item[method]
            parameters = spec.get("parameters", [])
            found.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    operation_id=spec["operationId"],
                    path_params=tuple(p["name"] for p in parameters if p["in"] == "path"),
                    query_params={
                        p["name"]: bool(p.get("required")) for p in parameters if p["in"] == "query"
                    },
                    has_body="requestBody" in spec,
                )
            )
    return found


SCHEMA = openapi_schema()
OPERATIONS = operations(SCHEMA)
