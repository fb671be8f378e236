"""The shapes the session endpoints speak."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from service.http.schemas import Me, Struct

TokenText = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class SessionCreate(Struct):
    token: TokenText
    """An API token (``sl_…``); it is checked, then forgotten: the cookie holds its digest."""


class Session(Struct):
    user: Me
    csrf_token: str | None
    """Send as ``X-CSRF-Token`` on writes; null when the caller used a Bearer token."""
    expires_at: datetime | None
    """When the session ends; null when the caller used a Bearer token."""
