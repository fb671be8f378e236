"""What can go wrong starting the embedded PostgreSQL: the EmbeddedPostgresUnavailable tree.

Package-internal: ``ADVICE``, the way out every message of the tree ends with.
"""

from __future__ import annotations

from service.errors import ServiceUnavailable

ADVICE = "or set DATABASE_URL to use an external PostgreSQL"


class EmbeddedPostgresUnavailable(ServiceUnavailable):
    """The embedded PostgreSQL could not be started; set DATABASE_URL to use an external one."""

    code = "embedded_postgres_failed"


class DataDirUnusable(EmbeddedPostgresUnavailable):
    """The embedded PostgreSQL's data directory cannot be used."""

    code = "data_dir_unusable"


class DataDirBusy(EmbeddedPostgresUnavailable):
    """Another process has held the embedded PostgreSQL's data directory for too long."""

    code = "data_dir_busy"


class NoUnprivilegedUser(EmbeddedPostgresUnavailable):
    """Running as root, but no unprivileged account is available to run PostgreSQL."""

    code = "no_unprivileged_user"


class ServerStartFailed(EmbeddedPostgresUnavailable):
    """The embedded PostgreSQL server did not start."""

    code = "embedded_start_failed"


class DatabaseCreateFailed(EmbeddedPostgresUnavailable):
    """The embedded PostgreSQL started, but the database could not be created."""

    code = "database_create_failed"
