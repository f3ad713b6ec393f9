"""An Idempotency-Key held by another request, for the tests of the 409 `idempotency_key_in_use`."""

from contextlib import contextmanager

from core.idempotency import _lock_id
from tests.support.database import another_session


@contextmanager
def key_held_elsewhere(*, user_id: int, key: str):
    """Another session holds the key's advisory lock, as the transaction of a first request that
    is still running does, until the block ends."""
    with another_session() as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", [_lock_id(user_id, key)])
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
