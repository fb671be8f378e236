from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from litestar.testing import AsyncTestClient
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from service.app import create_app
from tests.conftest import make_settings
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.anyio


def _through_proxy(db_url: str) -> tuple[TcpProxy, str]:
    params = conninfo_to_dict(db_url)
    host = str(params.get("host") or "127.0.0.1")
    if host.startswith("/"):
        pytest.skip("the database is reached over a unix socket; no TCP path to cut")
    proxy = TcpProxy(host, int(params.get("port") or 5432))
    params.update(host="127.0.0.1", port=str(proxy.port))
    return proxy, make_conninfo(**params)


async def _wait_for_status(client: Any, status: int, within: float = 15.0) -> Any:
    deadline = time.monotonic() + within
    while True:
        response = await client.get("/api/health")
        if response.status_code == status or time.monotonic() > deadline:
            return response
        await anyio.sleep(0.2)


async def test_health_is_503_while_the_database_is_unreachable_and_recovers(
    db_url: str, tmp_path: Path
) -> None:
    proxy, proxied_url = _through_proxy(db_url)
    proxy.start()
    settings = make_settings(
        proxied_url, tmp_path, database={"pool_timeout": 1.0, "connect_timeout": 1}
    )
    try:
        async with AsyncTestClient(app=create_app(settings)) as client:
            assert (await client.get("/api/health")).status_code == 200
            assert (await client.get("/api/health/ready")).status_code == 200

            proxy.stop()
            down = await _wait_for_status(client, 503)
            assert down.status_code == 503
            assert down.json()["status"] == "unavailable"
            assert down.json()["database"]["ok"] is False
            not_ready = await client.get("/api/health/ready")
            assert not_ready.status_code == 503
            assert not_ready.json()["status"] == "unavailable"
            assert not_ready.json()["database"]["ok"] is False
            alive = await client.get("/api/health/live")
            assert (alive.status_code, alive.json()) == (200, {"status": "alive"})

            unauth = await client.get(
                "/api/projects", headers={"Authorization": "Bearer sl_x_" + "y" * 30}
            )
            assert unauth.status_code == 503
            assert unauth.json()["code"] == "database_unavailable"

            proxy.start()
            up = await _wait_for_status(client, 200)
            assert up.status_code == 200
            assert up.json()["database"]["ok"] is True
            assert (await client.get("/api/health/ready")).status_code == 200
    finally:
        proxy.stop()


async def test_readiness_is_503_while_the_blob_store_is_down_and_the_report_degraded(
    db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(
        db_url,
        tmp_path,
        storage={"s3_bucket": "originals", "s3_endpoint_url": "http://127.0.0.1:9"},
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        ready = await client.get("/api/health/ready")
        report = await client.get("/api/health")
        alive = await client.get("/api/health/live")

    assert ready.status_code == 503
    assert ready.json()["database"]["ok"] is True
    assert ready.json()["blob_store"]["ok"] is False
    assert (report.status_code, report.json()["status"]) == (200, "degraded")
    assert alive.status_code == 200
