"""The one mapping from driver errors to what users see (service.storage.db.database_error)."""

from __future__ import annotations

import psycopg
import psycopg.errors
import pytest
from psycopg_pool import PoolTimeout

from service.errors import DatabaseUnavailable
from service.storage.db import database_error, translate_errors


@pytest.mark.parametrize(
    "driver_error",
    [
        PoolTimeout("couldn't get a connection after 5.00 sec"),
        psycopg.OperationalError("connection refused"),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
    ],
    ids=["pool-timeout", "refused", "terminated"],
)
def test_losing_the_database_is_database_unavailable(driver_error: Exception) -> None:
    assert isinstance(database_error(driver_error), DatabaseUnavailable)
    with pytest.raises(DatabaseUnavailable) as raised, translate_errors():
        raise driver_error
    assert raised.value.__cause__ is driver_error


@pytest.mark.parametrize(
    "driver_error",
    [
        psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
        psycopg.DataError("invalid byte sequence"),
    ],
    ids=["query-canceled", "data-error"],
)
def test_other_driver_errors_are_left_as_they_are(driver_error: Exception) -> None:
    assert database_error(driver_error) is None
    with pytest.raises(type(driver_error)), translate_errors():
        raise driver_error
