"""The service's log: quiet readable lines by default, one JSON object per line on request.

:func:`configure_logging` is called once by the commands that run for long (``serve``,
``worker``). Every record carries the id of the request (or job) it belongs to, from
:data:`request_id` (set by :mod:`service.http.request_context` for a request, and by the
extraction job for the request that queued it), so ``SHORTLIST_LOG__FORMAT=json`` lines can
be joined to the ``X-Request-ID`` a client saw.

Quiet means: the job queue's per-job INFO lines (a sweep every few seconds), the MCP SDK's
"Terminating session: None" per stateless call and its ERROR traceback when a client hangs
up before its request arrived are not shown; uvicorn's access log is replaced by
``service.http.access``, which names the path the client asked for (``/mcp``, not the mount's
``/``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from service.settings import Settings

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "shortlist_request_id", default=None
)
"""The id of the request (or of the request that queued the job) being handled, if any."""

_STANDARD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}

#: Loggers of libraries whose INFO lines are routine; WARNING and above still show.
QUIET_LOGGERS = ("procrastinate", "mcp", "httpx", "uvicorn.access")


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (``None`` outside a request or job)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        return True


class ClientDisconnectFilter(logging.Filter):
    """A client that hung up is not a server error: the MCP SDK's ERROR with a traceback
    for it becomes one INFO line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and type(error).__name__ == "ClientDisconnect":
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg, record.args, record.exc_info = "the client disconnected", (), None
            return logging.getLogger("service").isEnabledFor(logging.INFO)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, and any
    ``extra`` fields the call passed (the access log's method, path, status…)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRIBUTES and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Send every log record to ``stream`` (stderr) in the configured format and level."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RequestIdFilter())
    handler.addFilter(ClientDisconnectFilter())
    if settings.log.format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    level = settings.server.log_level.upper()
    for name in ("service", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers.clear()
        logger.propagate = True
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLevelName(level)))
