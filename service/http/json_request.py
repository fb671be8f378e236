"""The app's request class: a JSON body nested too deeply is the client's error, not ours.

msgspec refuses to decode past Python's recursion limit by raising
``RecursionError``, which Litestar does not translate; left alone, ``[[[[…`` sent
by anyone would be answered 500.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.exceptions import ClientException


class JsonRequest(Request[Any, Any, Any]):
    async def json(self) -> Any:
        try:
            return await super().json()
        except RecursionError:
            raise ClientException("The JSON body is nested too deeply.") from None
