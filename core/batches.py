"""Deleting many old rows without long locks: the housekeeping jobs of beat (stored
Idempotency-Key answers, the webhook delivery log) all purge this way."""

from django.db import connection, transaction


def delete_in_batches(
    *,
    table: str,
    where: str,
    params: list,
    order_by: str,
    batch_size: int,
    dependents: tuple[tuple[str, str], ...] = (),
    max_batches: int | None = None,
) -> int:
    """Delete the rows of `table` matching `where` (SQL over its columns, with `params`), oldest
    by `order_by` first, `batch_size` at a time; returns how many went.

    Each batch is its own short transaction: it locks at most `batch_size` rows, found through an
    index on the `order_by` column, and skips rows someone else holds (`SKIP LOCKED`) instead of
    waiting on a request; a later run takes them. `dependents` are (table, column) pairs of rows
    that reference the batch by that column: they go in the same statement, before their parents.
    `max_batches` stops after that many batches (a run of bounded length; the next run goes on)."""
    quote = connection.ops.quote_name
    removals = "".join(
        f", gone_{index} AS (DELETE FROM {quote(child)} WHERE {quote(column)} IN (SELECT id FROM batch))"
        for index, (child, column) in enumerate(dependents)
    )
    sql = (
        f"WITH batch AS (SELECT id FROM {quote(table)} WHERE {where} "
        f"ORDER BY {order_by} LIMIT %s FOR UPDATE SKIP LOCKED){removals} "
        f"DELETE FROM {quote(table)} WHERE id IN (SELECT id FROM batch)"
    )
    total = batches = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [*params, batch_size])
            deleted = cursor.rowcount
        total += deleted
        batches += 1
        if deleted < batch_size or batches == max_batches:
            return total
