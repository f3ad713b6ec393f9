"""Date-times read from PostgreSQL by psycopg's compiled loader.

Django reads every `timestamptz` value with a loader that subclasses psycopg's pure-Python one
(so that it can set the time zone it returns), even when the compiled `psycopg-binary` is
installed: about 3 µs of Python per value, against 0.3 µs compiled. A page of 100 bookings holds
300 date-times (docs/benchmarks.md, "Profiling and what changed").

When Django's zone and the session's are both UTC (this service's settings: `USE_TZ`, no
`TIME_ZONE` on the database), the compiled loader already returns what Django's does: an aware
datetime in `datetime.timezone.utc`. `use_compiled_datetime_loader` (on `connection_created`)
then registers `UtcTimestamptzLoader` for the connection: Django's own loader class, as Django
checks it (`timezone`), whose `load` is the compiled loader's. In any other case (no compiled
implementation, another zone) Django's loader stays.
"""

import datetime

from django.db.backends.postgresql.psycopg_any import BaseTzLoader

from core.fastpath.switch import fast_paths

try:
    import psycopg
    from psycopg.pq import Format
except ImportError:  # another database backend: nothing to do
    psycopg = None


def _compiled_loader() -> type | None:
    if psycopg is None:
        return None
    loader = psycopg.adapters.get_loader(psycopg.postgres.types["timestamptz"].oid, Format.TEXT)
    return loader if loader.__module__.startswith("psycopg_binary") else None


COMPILED = _compiled_loader()


class UtcTimestamptzLoader(BaseTzLoader):
    """Django's timestamptz loader for UTC, loading with psycopg's compiled loader."""

    timezone = datetime.UTC

    def __init__(self, oid, context=None):
        super().__init__(oid, context)
        self.load = COMPILED(oid, context).load


def use_compiled_datetime_loader(sender, connection, **kwargs) -> None:
    """On `connection_created`: the compiled loader for this connection when it returns what
    Django's would (both zones UTC), and the switch is on (`FAST_PATHS`)."""
    if not fast_paths():
        return
    if COMPILED is None or connection.vendor != "postgresql" or connection.timezone is not datetime.UTC:
        return
    if connection.connection.info.parameter_status("TimeZone") != "UTC":
        return
    connection.connection.adapters.register_loader("timestamptz", UtcTimestamptzLoader)


def read_in_binary(cursor) -> None:
    """The rows of `cursor` (a Django cursor, before its `execute`) sent in PostgreSQL's binary
    format, when that reads the values the text format reads: this connection has the compiled
    loader above (both zones UTC), whose binary twin gives the same aware UTC datetimes. Only for a
    statement whose columns are integers and date-times (`CompiledValues(binary=True)`): a binary
    date-time is 8 bytes that PostgreSQL copies and psycopg reads as they are, against text that
    one writes and the other parses (400 rows of two date-times: 0.9 → 0.55 ms, docs/benchmarks.md)."""
    if psycopg is None or cursor.db.vendor != "postgresql" or isinstance(cursor.cursor, psycopg.ClientCursor):
        return  # (client-side binding, `server_side_binding` off, has no binary results)
    oid = psycopg.postgres.types["timestamptz"].oid
    if cursor.db.connection.adapters.get_loader(oid, Format.TEXT) is UtcTimestamptzLoader:
        cursor.cursor.format = Format.BINARY
