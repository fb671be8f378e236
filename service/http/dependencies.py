"""What handlers can ask for by name: the runtime, a pooled connection, the caller.

Handlers annotate parameters with these aliases (Litestar's ``NamedDependency``)
so each injected value is explicit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from litestar import Request
from litestar.di import NamedDependency, Provide

from service.http.auth import provide_principal
from service.records import Principal
from service.runtime import Runtime
from service.storage.db import Connection, lend

RuntimeDep = NamedDependency[Runtime]
ConnectionDep = NamedDependency[Connection]
PrincipalDep = NamedDependency[Principal]


def provide_runtime(request: Request[Any, Any, Any]) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def provide_connection(runtime: RuntimeDep) -> AsyncIterator[Connection]:
    """Lend one pooled connection for the length of a request.

    Litestar throws a handler's exception back into this generator and turns any
    other exception coming out of it into a 500, so errors raised while the
    connection is in use pass through unchanged (see :func:`service.storage.db.lend`);
    the error handlers translate them with :func:`service.storage.db.database_error`.
    """
    async with lend(runtime.pool) as conn:
        yield conn


def dependencies() -> dict[str, Provide]:
    return {
        "runtime": Provide(provide_runtime, sync_to_thread=False),
        "conn": Provide(provide_connection),
        "principal": Provide(provide_principal, sync_to_thread=False),
    }
