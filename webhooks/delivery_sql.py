"""The two PostgreSQL statements of the delivery hot path (`webhooks.delivery`), one round trip each.

A delivery used to cost nine round trips (BEGIN, SELECT … FOR UPDATE, UPDATE, COMMIT to claim it;
BEGIN, SELECT … FOR UPDATE, INSERT, UPDATE, COMMIT to log it). These statements keep the same rules
and the same atomicity, because a single statement is its own transaction:

- `CLAIM_SQL` takes the row for one attempt with a conditional UPDATE … RETURNING. The row is picked
  by a `FOR UPDATE SKIP LOCKED` subquery, so, as before, a row that someone else is writing (the
  sweeper, a redeliver, another worker) is skipped rather than waited for; its broker message or the
  sweeper brings it back. The webhook comes back joined in the same row, so it is not read again.
  A due row of an inactive webhook is cancelled instead of claimed.
- `RECORD_SUCCESS_SQL` inserts the attempt, marks the delivery succeeded and ends the webhook's run
  of failures (`failing_since`) in one statement with data-modifying CTEs.

Column names come from the models, so a renamed field fails loudly here rather than silently.
"""

from django.db import connection

from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery


def _columns(model, alias: str) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(field.column)}" for field in model._meta.concrete_fields)


def from_row(model, values):
    """A model instance from a raw row of all its concrete columns, through the fields' converters
    (jsonb comes back from psycopg as text; JSONField decodes it), as a queryset would build it."""
    fields = model._meta.concrete_fields
    converted = []
    for field, value in zip(fields, values, strict=True):
        expression = field.get_col(model._meta.db_table)
        for converter in connection.ops.get_db_converters(expression) + expression.get_db_converters(connection):
            value = converter(value, expression, connection)
        converted.append(value)
    return model.from_db(connection.alias, [field.attname for field in fields], converted)


DELIVERY_TABLE = WebhookDelivery._meta.db_table
WEBHOOK_TABLE = Webhook._meta.db_table
ATTEMPT_TABLE = DeliveryAttempt._meta.db_table
ATTEMPT_INSERT_FIELDS = [field for field in DeliveryAttempt._meta.concrete_fields if not field.primary_key]
ATTEMPT_COLUMNS = ", ".join(connection.ops.quote_name(field.column) for field in ATTEMPT_INSERT_FIELDS)
ATTEMPT_PLACEHOLDERS = ", ".join(f"%(attempt_{field.column})s" for field in ATTEMPT_INSERT_FIELDS)

# Claimable: pending, or delivering under an expired (or no) lease; and due (1 s early is fine).
# `force` (test sends) skips both checks and the inactive rule, as before.
CLAIM_SQL = f"""
UPDATE {DELIVERY_TABLE} AS delivery SET
    status = CASE WHEN webhook.active OR %(force)s THEN %(delivering)s ELSE %(cancelled)s END,
    attempts = delivery.attempts + CASE WHEN webhook.active OR %(force)s THEN 1 ELSE 0 END,
    last_attempt_at = CASE WHEN webhook.active OR %(force)s THEN %(now)s ELSE delivery.last_attempt_at END,
    lease_expires_at = CASE WHEN webhook.active OR %(force)s THEN %(lease_expires_at)s END,
    next_attempt_at = CASE WHEN webhook.active OR %(force)s THEN delivery.next_attempt_at END
FROM {WEBHOOK_TABLE} AS webhook
WHERE webhook.id = delivery.webhook_id
  AND delivery.id = (
    SELECT candidate.id FROM {DELIVERY_TABLE} AS candidate
    WHERE candidate.id = %(id)s
      AND (%(force)s OR (
        (candidate.status = %(pending)s
         OR (candidate.status = %(delivering)s
             AND (candidate.lease_expires_at IS NULL OR candidate.lease_expires_at <= %(now)s)))
        AND (candidate.next_attempt_at IS NULL OR candidate.next_attempt_at <= %(due_by)s)))
    FOR UPDATE SKIP LOCKED
  )
RETURNING {_columns(WebhookDelivery, "delivery")}, {_columns(Webhook, "webhook")}
"""

RECORD_SUCCESS_SQL = f"""
WITH attempt AS (
    INSERT INTO {ATTEMPT_TABLE} ({ATTEMPT_COLUMNS}) VALUES ({ATTEMPT_PLACEHOLDERS})
    RETURNING id
), failure_run_ended AS (
    UPDATE {WEBHOOK_TABLE} SET failing_since = NULL
    WHERE id = %(webhook_id)s AND failing_since IS NOT NULL AND %(ends_failure_run)s
)
UPDATE {DELIVERY_TABLE} SET
    status = %(succeeded)s, delivered_at = %(delivered_at)s, next_attempt_at = NULL, lease_expires_at = NULL
WHERE id = %(delivery_id)s
RETURNING (SELECT id FROM attempt)
"""
