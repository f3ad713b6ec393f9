"""The two PostgreSQL statements of the delivery hot path (`webhooks.delivery`), one round trip each.

A delivery used to cost nine round trips (BEGIN, SELECT … FOR UPDATE, UPDATE, COMMIT to claim it;
BEGIN, SELECT … FOR UPDATE, INSERT, UPDATE, COMMIT to log it). These statements keep the same rules
and the same atomicity, because a single statement is its own transaction:

- `CLAIM_SQL` takes the row for one attempt with a conditional UPDATE … RETURNING. The row is picked
  by a `FOR UPDATE SKIP LOCKED` subquery, so, as before, a row that someone else is writing (the
  sweeper, a redeliver, another worker) is skipped rather than waited for; its broker message or the
  sweeper brings it back. The webhook comes back joined in the same row, so it is not read again.
  A due row of an inactive webhook is cancelled instead of claimed.
- `RECORD_SUCCESS_SQL` writes the attempt's result, marks the delivery succeeded and ends the
  webhook's run of failures (`failing_since`, the circuit breaker's count) in one statement with
  data-modifying CTEs.

The ORM cannot say either statement (UPDATE … FROM … RETURNING around a FOR UPDATE SKIP LOCKED
subquery; data-modifying CTEs), so they are written by hand; but every table and column name in them
comes from the models' `_meta`, so a renamed column follows and a removed field fails loudly at
import rather than silently. The returned row becomes model instances with `core.fastpath.compiled_queries`, the helper
the other raw lookups use.
"""

from django.db import connection

from core.fastpath.compiled_queries import row_layout
from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery


class _Names:
    """A model's quoted table (`table`) and columns by field name (`delivery.next_attempt_at`), taken
    from `_meta`: a renamed field or column changes the SQL with it, and a field that no longer
    exists stops the import with FieldDoesNotExist."""

    def __init__(self, model):
        self.model = model
        self.table = connection.ops.quote_name(model._meta.db_table)

    def __getattr__(self, field_name: str) -> str:
        return connection.ops.quote_name(self.model._meta.get_field(field_name).column)


# What `CLAIM_SQL` returns, in order: the delivery's columns, then its webhook's
# (`core.fastpath.compiled_queries.instances`).
CLAIMED_ROW = (row_layout(WebhookDelivery), row_layout(Webhook))
# What an attempt learns once it is over (it is inserted, open, when it starts).
ATTEMPT_RESULT_FIELDS = [
    DeliveryAttempt._meta.get_field(name)
    for name in (
        "duration_ms",
        "request_headers",
        "response_status",
        "response_headers",
        "response_body",
        "error_class",
        "error_message",
    )
]


def claim_sql() -> str:
    """Claimable: pending, or delivering under an expired (or no) lease; and due (1 s early is
    fine; no due time means waiting for its webhook to be re-enabled, not due). `force` (test
    sends) skips both checks and the inactive rule, as before."""
    delivery, webhook = _Names(WebhookDelivery), _Names(Webhook)
    delivery_layout, webhook_layout = CLAIMED_ROW
    sending = f"webhook.{webhook.active} OR %(force)s"
    return f"""
UPDATE {delivery.table} AS delivery SET
    {delivery.status} = CASE WHEN {sending} THEN %(delivering)s ELSE %(cancelled)s END,
    {delivery.attempts} = delivery.{delivery.attempts} + CASE WHEN {sending} THEN 1 ELSE 0 END,
    {delivery.last_attempt_at} = CASE WHEN {sending} THEN %(now)s ELSE delivery.{delivery.last_attempt_at} END,
    {delivery.lease_expires_at} = CASE WHEN {sending} THEN %(lease_expires_at)s END,
    {delivery.next_attempt_at} = CASE WHEN {sending} THEN delivery.{delivery.next_attempt_at} END
FROM {webhook.table} AS webhook
WHERE webhook.{webhook.id} = delivery.{delivery.webhook}
  AND delivery.{delivery.id} = (
    SELECT candidate.{delivery.id} FROM {delivery.table} AS candidate
    WHERE candidate.{delivery.id} = %(id)s
      AND (%(force)s OR (
        (candidate.{delivery.status} = %(pending)s
         OR (candidate.{delivery.status} = %(delivering)s
             AND (candidate.{delivery.lease_expires_at} IS NULL OR candidate.{delivery.lease_expires_at} <= %(now)s)))
        AND candidate.{delivery.next_attempt_at} <= %(due_by)s))
    FOR UPDATE SKIP LOCKED
  )
RETURNING {delivery_layout.columns("delivery")}, {webhook_layout.columns("webhook")}
"""


def record_success_sql() -> str:
    """The attempt (inserted open when it started) gets its result, `%(attempt_<column>)s` for each
    field of ATTEMPT_RESULT_FIELDS; the delivery is marked succeeded; the webhook's run of failures
    ends and its circuit closes."""
    attempt, delivery, webhook = _Names(DeliveryAttempt), _Names(WebhookDelivery), _Names(Webhook)
    assignments = ", ".join(
        f"{connection.ops.quote_name(field.column)} = %(attempt_{field.column})s" for field in ATTEMPT_RESULT_FIELDS
    )
    return f"""
WITH attempt AS (
    UPDATE {attempt.table} SET {assignments}
    WHERE {attempt.id} = %(attempt_id)s
    RETURNING {attempt.id}
), failure_run_ended AS (
    UPDATE {webhook.table} SET
        {webhook.failing_since} = CASE WHEN %(ends_failure_run)s THEN NULL ELSE {webhook.failing_since} END,
        {webhook.consecutive_failures} = 0, {webhook.circuit_open_until} = NULL
    WHERE {webhook.id} = %(webhook_id)s
      AND (({webhook.failing_since} IS NOT NULL AND %(ends_failure_run)s)
           OR {webhook.consecutive_failures} > 0 OR {webhook.circuit_open_until} IS NOT NULL)
)
UPDATE {delivery.table} SET
    {delivery.status} = %(succeeded)s, {delivery.delivered_at} = %(delivered_at)s,
    {delivery.next_attempt_at} = NULL, {delivery.lease_expires_at} = NULL
WHERE {delivery.id} = %(delivery_id)s
RETURNING (SELECT {attempt.id} FROM attempt)
"""


CLAIM_SQL = claim_sql()
RECORD_SUCCESS_SQL = record_success_sql()
