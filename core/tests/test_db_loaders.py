"""`core.fastpath.db_loaders`: PostgreSQL's date-times are read by psycopg's compiled loader, and give
exactly what Django's own loader gives."""

import datetime

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.pq import Format

from core.fastpath.db_loaders import COMPILED, UtcTimestamptzLoader, read_in_binary, use_compiled_datetime_loader

pytestmark = pytest.mark.django_db

TIMESTAMPTZ = psycopg.postgres.types["timestamptz"].oid
VALUES = [
    "2026-11-26 09:17:14+00",
    "2026-03-29 00:59:59.999999+00",  # the second before Europe's clocks go forward
    "2026-10-25 01:00:00.5+00",
    "1999-12-31 23:59:59+00",
    "1970-01-01 00:00:00+00",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "2024-02-29 12:00:00.000001+00",
    "2026-06-01 12:00:00-09:30",  # read back in the session's zone, UTC
]


def loader_in_use(cursor) -> type:
    return cursor.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)


def test_the_compiled_loader_reads_every_date_time_of_the_service():
    assert COMPILED is not None, "psycopg-binary (requirements.txt) provides the compiled loader"
    with connection.cursor() as cursor:
        assert loader_in_use(cursor.cursor) is UtcTimestamptzLoader
        cursor.execute("SELECT %s::timestamptz", ["2026-11-26 09:17:14+00"])
        (value,) = cursor.fetchone()
    assert value == datetime.datetime(2026, 11, 26, 9, 17, 14, tzinfo=datetime.UTC)
    assert value.tzinfo is datetime.UTC


@pytest.mark.parametrize("text", VALUES)
def test_it_gives_what_djangos_loader_gives(text):
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::timestamptz::text", [text])
        (as_sent,) = cursor.fetchone()  # as PostgreSQL writes it in the session's zone

        ours = UtcTimestamptzLoader(TIMESTAMPTZ, cursor.cursor).load(as_sent.encode())
        register_tzloader(datetime.UTC, cursor.cursor)  # Django's, for this cursor only
        djangos = loader_in_use(cursor.cursor)(TIMESTAMPTZ, cursor.cursor).load(as_sent.encode())

    assert (ours, ours.tzinfo, ours.utcoffset()) == (djangos, djangos.tzinfo, djangos.utcoffset())
    assert ours.tzinfo is datetime.UTC


def test_a_session_in_another_zone_keeps_djangos_loader():
    adapters = connection.connection.adapters
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Europe/Berlin'")
    try:
        register_tzloader(datetime.UTC, connection.connection)  # what Django registers
        djangos = loader_in_use(connection.connection)

        use_compiled_datetime_loader(sender=None, connection=connection)

        assert djangos is not UtcTimestamptzLoader and loader_in_use(connection.connection) is djangos
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")
        use_compiled_datetime_loader(sender=None, connection=connection)
    assert adapters.get_loader(TIMESTAMPTZ, Format.TEXT) is UtcTimestamptzLoader


def rows_of(sql: str, params: list, *, binary: bool) -> list:
    with connection.cursor() as cursor:
        if binary:
            read_in_binary(cursor)
        assert cursor.cursor.format == (Format.BINARY if binary else Format.TEXT)
        cursor.execute(sql, params)
        return cursor.fetchall()


@pytest.mark.fastpath  # the machinery's own work, not an answer
def test_integers_and_date_times_read_in_binary_are_the_values_read_as_text():
    sql = (
        "SELECT moment::timestamptz, length(moment), NULL::int, (2^40)::bigint, -1::smallint "
        "FROM unnest(%s::text[]) AS moment"
    )
    as_text = rows_of(sql, [VALUES], binary=False)
    in_binary = rows_of(sql, [VALUES], binary=True)
    assert in_binary == as_text
    assert [type(value) for value in in_binary[0]] == [datetime.datetime, int, type(None), int, int]
    assert all(row[0].tzinfo is datetime.UTC for row in in_binary)


def test_a_session_in_another_zone_reads_as_text():
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Europe/Berlin'")
    try:
        register_tzloader(datetime.UTC, connection.connection)  # what Django registers
        with connection.cursor() as cursor:
            read_in_binary(cursor)
            assert cursor.cursor.format == Format.TEXT
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")
        use_compiled_datetime_loader(sender=None, connection=connection)
