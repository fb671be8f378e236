"""How clients reach the server: the Unix socket's directory and the libpq URL.

Package-internal: ``SUPERUSER``, ``PORT``, ``SHORT_SOCKET_PREFIX``,
``socket_dir_for``, ``socket_dir_in_use`` and ``server_url`` serve
:mod:`service.storage.embedded_pg.server` and :mod:`service.storage.embedded_pg.lifecycle`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path
from urllib.parse import quote

from service.storage.embedded_pg.accounts import Account
from service.storage.embedded_pg.errors import ADVICE, DataDirUnusable

SUPERUSER = "postgres"
"""The database role ``initdb`` creates and every connection uses."""
PORT = 5432
"""Only names the socket file (``.s.PGSQL.5432``); no TCP port is opened."""

_SOCKET_PATH_MAX = 103  # bytes of sun_path, less the NUL: 108 on Linux, 104 on macOS
_SOCKET_DIR_SAFE = re.compile(r"[A-Za-z0-9_./+@-]+")
SHORT_SOCKET_PREFIX = "shortlist-pgsock-"


def socket_dir_for(data_dir: Path, account: Account | None) -> Path:
    """The data directory, or a private short directory when its path will not do."""
    socket_file = data_dir / f".s.PGSQL.{PORT}"
    if len(os.fsencode(socket_file)) <= _SOCKET_PATH_MAX and _SOCKET_DIR_SAFE.fullmatch(
        str(data_dir)
    ):
        return data_dir
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
    for base in (Path(tempfile.gettempdir()), Path("/tmp")):  # noqa: S108 - private dir, checked
        short = base / f"{SHORT_SOCKET_PREFIX}{digest}"
        if len(os.fsencode(short / socket_file.name)) <= _SOCKET_PATH_MAX and (
            _SOCKET_DIR_SAFE.fullmatch(str(short))
        ):
            break
    else:
        raise DataDirUnusable(f"no short enough directory for the PostgreSQL socket; {ADVICE}.")
    owner = account.uid if account is not None else os.geteuid()
    try:
        with contextlib.suppress(FileExistsError):
            short.mkdir(mode=0o700)
            if account is not None:
                os.chown(short, account.uid, account.gid)
        info = short.lstat()
    except OSError as exc:
        raise DataDirUnusable(
            f"cannot create the socket directory {short}: {exc}; {ADVICE}."
        ) from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != owner or info.st_mode & 0o077:
        raise DataDirUnusable(
            f"the socket directory {short} exists but is not a private directory of uid {owner}; "
            f"remove it, {ADVICE}."
        )
    return short


def socket_dir_in_use(data_dir: Path) -> Path | None:
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    return Path(lines[4].strip()) if len(lines) > 4 and lines[4].strip() else None


def server_url(data_dir: Path, database: str) -> str:
    """A libpq URL for the running server, read from its ``postmaster.pid``."""
    lines = (data_dir / "postmaster.pid").read_text().splitlines()
    port, socket_dir = lines[3].strip(), lines[4].strip()
    return (
        f"postgresql://{SUPERUSER}@/{quote(database, safe='')}"
        f"?host={quote(socket_dir, safe='')}&port={port}"
    )
