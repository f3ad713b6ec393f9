"""`GET /v1/events`: the outbox as a feed to poll, for receivers that cannot take webhooks or were
down longer than the retry schedule (docs/webhooks.md, "After an outage: recover or pull")."""

import uuid
from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.datetimes import iso_utc
from core.query import Choice, Instant, Integer, ListOf, QueryParameters, Text
from core.scopes import READ_WEBHOOK
from core.viewsets import ResourceAPIView
from webhooks.conf import webhook_setting
from webhooks.cursors import decode_event_cursor, encode_event_cursor
from webhooks.models import WebhookTrigger
from webhooks.selectors import event_feed, feed_horizon
from webhooks.serializers import EventFeedSerializer, EventSerializer

LAST_ROW = 2**63 - 1  # a row id above every real one: "everything of that transaction and before"


class EventFeedParameters(QueryParameters):
    since = Instant(description="Events at or after this time (RFC 3339). Required unless `cursor` is given.")
    cursor = Text(description="`nextCursor` of the previous answer: the events committed after those.")
    types = ListOf(
        Choice(WebhookTrigger.values),
        comma_separated=True,
        description="Only these triggers (comma-separated or repeated), e.g. `BOOKING_CREATED,BOOKING_CANCELLED`.",
    )
    webhook_id = Text(description="Only the events of this webhook (its id).")
    take = Integer(minimum=1, maximum=500, default=100, description="At most this many events (default 100).")


class EventFeedView(ResourceAPIView):
    """The events of the caller's webhooks (their own, their event types' and their managed teams'),
    with the payloads the webhooks carried, in commit order."""

    scopes = {"GET": READ_WEBHOOK}

    @extend_schema(parameters=EventFeedParameters.openapi_parameters(), responses={200: EventFeedSerializer})
    def get(self, request):
        """Poll with `since` once, then with the `nextCursor` of each answer: the cursor never
        skips an event, even one whose transaction committed after later ones. An event heard by
        two of your webhooks is listed once per webhook (each with its own `webhook-id`); filter
        with `webhookId` for one stream. Reaches back EVENTS_RETENTION_SECONDS (30 days)."""
        parameters = EventFeedParameters.parse(request)
        oldest = timezone.now() - timedelta(seconds=webhook_setting("EVENTS_RETENTION_SECONDS"))
        after = decode_event_cursor(parameters["cursor"]) if parameters["cursor"] is not None else None
        since = parameters["since"]
        if since is None and after is None:
            raise ValidationError({"since": ["Give since (or the cursor of a previous answer)."]})
        if since is not None and since < oldest:
            raise ValidationError(
                {"since": [f"Events are kept for a limited time: since must be {iso_utc(oldest)} or later."]}
            )
        webhook_id = parameters["webhook_id"]
        if webhook_id is not None and not _is_uuid(webhook_id):
            raise ValidationError({"webhookId": [f"'{webhook_id[:40]}' is not a webhook id."]})
        take = parameters["take"]
        horizon = feed_horizon()
        rows = list(
            event_feed(
                user=request.user,
                horizon=horizon,
                since=max(since or oldest, oldest),
                after=after,
                types=parameters["types"],
                webhook_id=webhook_id,
            )[: take + 1]
        )
        has_more = len(rows) > take
        rows = rows[:take]
        if has_more:
            position = (rows[-1].transaction_id, rows[-1].id)
        else:
            # Every matching event of a transaction below the horizon was just read: continue above it.
            position = max((horizon - 1, LAST_ROW), after or (0, 0))
        body = {
            "events": EventSerializer(rows, many=True).data,
            "nextCursor": encode_event_cursor(*position),
            "hasMore": has_more,
        }
        return Response(body)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
