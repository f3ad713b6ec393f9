"""An Idempotency-Key held by another request, for the tests of the 409 `idempotency_key_in_use`."""

from contextlib import contextmanager

import psycopg
from django.db import connection

from core.idempotency import _lock_id


@contextmanager
def key_held_elsewhere(*, user_id: int, key: str):
    """Another session holds the key's advisory lock, as the transaction of a first request that
    is still running does, until the block ends."""
    settings_dict = connection.settings_dict
    with psycopg.connect(
        host=settings_dict["HOST"], port=settings_dict["PORT"], user=settings_dict["USER"], dbname=settings_dict["NAME"]
    ) as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_id(user_id, key)])
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
