"""Running as root: the unprivileged account PostgreSQL runs under, and its way in.

Package-internal: ``Account``, ``owner_account``, ``unprivileged_account`` and
``grant_traversal`` serve :mod:`service.storage.embedded_pg.cluster`.
"""

from __future__ import annotations

import logging
import pwd
import shutil
import stat
import subprocess
from pathlib import Path
from typing import NamedTuple

from service.storage.embedded_pg.errors import ADVICE, DataDirUnusable, NoUnprivilegedUser

logger = logging.getLogger(__package__)  # the package logs as one: "service.storage.embedded_pg"

ROOT_FALLBACK_USER = "pgserver"
"""System account a new cluster runs under when Shortlist runs as root."""


class Account(NamedTuple):
    """The OS account the server runs under when we are root."""

    uid: int
    gid: int
    name: str


def owner_account(data_dir: Path) -> Account:
    info = data_dir.stat()
    if info.st_uid == 0:
        raise DataDirUnusable(
            f"the PostgreSQL cluster in {data_dir} is owned by root, and PostgreSQL will not run "
            f"as root; chown -R it to an unprivileged user, {ADVICE}."
        )
    try:
        entry = pwd.getpwuid(info.st_uid)
    except KeyError:
        return Account(info.st_uid, info.st_gid, str(info.st_uid))
    return Account(entry.pw_uid, entry.pw_gid, entry.pw_name)


def unprivileged_account() -> Account:
    """The ``pgserver`` system account, created if missing."""
    name = ROOT_FALLBACK_USER
    shell = shutil.which("nologin") or "/bin/false"
    attempts = [
        [
            "useradd",
            "--system",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            shell,
            name,
        ],
        ["adduser", "-S", "-D", "-H", "-h", "/nonexistent", "-s", shell, name],  # busybox
    ]
    failures: list[str] = []
    for command in [[name], *attempts]:
        try:
            entry = pwd.getpwnam(name)
            return Account(entry.pw_uid, entry.pw_gid, name)
        except KeyError:
            pass
        if command == [name] or shutil.which(command[0]) is None:
            continue
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        failures.append(f"{command[0]}: {result.stderr.strip() or result.returncode}")
    try:  # a concurrent start may have created it meanwhile
        entry = pwd.getpwnam(name)
        return Account(entry.pw_uid, entry.pw_gid, name)
    except KeyError:
        pass
    raise NoUnprivilegedUser(
        f"running as root, and PostgreSQL refuses to run as root; the system user {name!r} "
        f"could not be created ({'; '.join(failures) or 'no useradd or adduser found'}). "
        f"Create it (useradd --system {name}), run Shortlist as a non-root user, {ADVICE}."
    )


def grant_traversal(path: Path, account: Account) -> None:
    """Give others ``x`` on every parent of ``path`` that ``account`` could not enter."""
    changed: list[str] = []
    for directory in reversed(path.parents):
        info = directory.stat()
        if info.st_uid == account.uid:
            allowed = info.st_mode & stat.S_IXUSR
        elif info.st_gid == account.gid:
            allowed = info.st_mode & stat.S_IXGRP
        else:
            allowed = info.st_mode & stat.S_IXOTH
        if not allowed:
            directory.chmod(stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
            changed.append(str(directory))
    if changed:
        logger.warning(
            "added o+x to %s so that user %r can reach %s", ", ".join(changed), account.name, path
        )
