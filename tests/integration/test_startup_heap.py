"""A started service sets start-up's objects aside from the collector's full passes, once
(:mod:`service.heap`): in a fresh interpreter, so that no earlier test has done it."""

from __future__ import annotations

import json
import textwrap

from tests.support.fresh_python import run_fresh

START_TWICE = textwrap.dedent(
    """
    import asyncio, gc, json, sys, tempfile
    from pathlib import Path
    from litestar.testing import AsyncTestClient
    from service.app import create_app
    from tests.conftest import make_settings

    async def main() -> None:
        seen = {"before": gc.get_freeze_count()}
        app = create_app(make_settings(sys.argv[1], Path(tempfile.mkdtemp())))
        async with AsyncTestClient(app=app) as client:
            assert (await client.get("/api/projects")).status_code == 401
            seen["started"] = gc.get_freeze_count()
            tracked = gc.get_objects()
            seen["app_walked"] = any(o is app for o in tracked)
            seen["routes_walked"] = any(o is app.routes for o in tracked)
            del tracked
            seen["request_walked"] = gc.is_tracked(made := [object()]) and any(
                o is made for o in gc.get_objects()
            )
        again = create_app(make_settings(sys.argv[1], Path(tempfile.mkdtemp())))
        async with AsyncTestClient(app=again) as client:
            seen["again"] = gc.get_freeze_count()
            seen["second_app_walked"] = any(o is again for o in gc.get_objects())
        print(json.dumps(seen))

    asyncio.run(main())
    """
)


def test_start_up_objects_are_frozen_once_and_later_ones_still_collected(db_url: str) -> None:
    seen = json.loads(run_fresh(START_TWICE, db_url, timeout=120).strip().splitlines()[-1])
    assert seen["before"] == 0
    assert seen["started"] > 10_000  # modules, classes, the app: tens of thousands
    # The app made before start-up is no longer walked by a collection...
    assert not seen["app_walked"]
    assert not seen["routes_walked"]
    # ...while what a request makes afterwards is.
    assert seen["request_walked"]
    # A second start in the same process freezes nothing more (frozen objects nothing refers
    # to any longer still go, so the count may shrink): the second app is walked.
    assert seen["again"] <= seen["started"]
    assert seen["second_app_walked"]
