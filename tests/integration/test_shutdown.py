"""A service stops when asked, even right after it started: its worker must not swallow
the cancel and start again (procrastinate's worker returns quietly when cancelled)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.fresh_python import run_fresh

STOP_AND_START = textwrap.dedent(
    """
    import asyncio, sys, tempfile
    from pathlib import Path
    from litestar.testing import AsyncTestClient
    from service.app import create_app
    from tests.conftest import make_settings

    async def main() -> None:
        for _ in range(6):
            settings = make_settings(sys.argv[1], Path(tempfile.mkdtemp()))
            assert settings.server.run_worker
            async with AsyncTestClient(app=create_app(settings)) as client:
                assert (await client.get("/api/projects")).status_code == 401
        print("stopped every time")

    asyncio.run(main())
    """
)


def test_the_service_and_its_worker_stop_at_once_even_right_after_starting(
    db_url: str, tmp_path: Path
) -> None:
    printed = run_fresh(STOP_AND_START, db_url, timeout=90)  # about a second; a hang never ends
    assert "stopped every time" in printed
