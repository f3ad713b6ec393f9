"""`GET /v1/events` (docs/webhooks.md, "After an outage: recover or pull"): the outbox as a feed,
in commit order, under the webhooks' visibility, with a cursor that never skips a late commit.

The feed only shows committed transactions older than every running one, so these tests commit
for real (`transaction=True`)."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import MembershipRole
from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from core.datetimes import iso_utc
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import auth
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db(transaction=True)


def an_hour_ago() -> str:
    return iso_utc(timezone.now() - timedelta(hours=1))


def emit(trigger: str, uid: str, **owner) -> list[WebhookDelivery]:
    with transaction.atomic():
        return emit_event(trigger=trigger, payload={"uid": uid, "title": f"Meeting {uid}"}, **owner)


def read_all(api_client, headers, **query) -> tuple[list[dict], str]:
    """Every page from `since` (or `cursor`) on, as a poller does; the events and the last cursor."""
    events, params = [], {"since": an_hour_ago(), **query}
    while True:
        body = api_client.get("/v1/events", params, **headers).json()
        events += body["events"]
        params = {key: value for key, value in params.items() if key not in ("since", "cursor")}
        params["cursor"] = body["nextCursor"]
        if not body["hasMore"]:
            return events, body["nextCursor"]


def test_the_feed_has_the_payloads_the_webhooks_carried_in_commit_order(api_client):
    user = UserFactory()
    webhook = WebhookFactory(user=user, event_triggers=["BOOKING_CREATED", "BOOKING_CANCELLED"])
    emit("BOOKING_CREATED", "a", user=user)
    emit("BOOKING_CANCELLED", "a", user=user)
    emit("BOOKING_CREATED", "b", user=user)

    response = api_client.get("/v1/events", {"since": an_hour_ago()}, **auth(user, "READ_WEBHOOK"))

    assert response.status_code == 200
    body = response.json()
    assert body["hasMore"] is False and body["nextCursor"]
    deliveries = list(WebhookDelivery.objects.order_by("id"))
    assert body["events"] == [
        {
            "id": delivery.pk,
            "webhookId": str(webhook.pk),
            "messageId": delivery.message_id,
            "triggerEvent": delivery.trigger_event,
            "createdAt": iso_utc(delivery.event_created_at),
            "payload": delivery.payload,
        }
        for delivery in deliveries
    ]


def test_types_and_webhook_id_filter_and_pages_follow_the_cursor(api_client):
    user = UserFactory()
    first = WebhookFactory(user=user, event_triggers=["BOOKING_CREATED", "BOOKING_CANCELLED"])
    WebhookFactory(user=user, event_triggers=["BOOKING_CREATED"])
    for uid in "abcde":
        emit("BOOKING_CREATED", uid, user=user)
    emit("BOOKING_CANCELLED", "a", user=user)
    headers = auth(user)

    everything, _ = read_all(api_client, headers, take=3)
    assert len(everything) == 11  # five events heard by two webhooks, one by one
    assert [event["id"] for event in everything] == sorted(event["id"] for event in everything)

    cancelled, _ = read_all(api_client, headers, types="BOOKING_CANCELLED")
    assert [(event["triggerEvent"], event["payload"]["uid"]) for event in cancelled] == [("BOOKING_CANCELLED", "a")]
    one_stream, _ = read_all(api_client, headers, webhookId=str(first.pk), take=2)
    assert [event["payload"]["uid"] for event in one_stream] == ["a", "b", "c", "d", "e", "a"]


def test_polling_with_the_cursor_returns_only_what_came_after(api_client):
    user = UserFactory()
    WebhookFactory(user=user)
    emit("BOOKING_CREATED", "before", user=user)
    headers = auth(user)
    events, cursor = read_all(api_client, headers)
    assert [event["payload"]["uid"] for event in events] == ["before"]

    empty = api_client.get("/v1/events", {"cursor": cursor}, **headers).json()
    assert empty["events"] == [] and empty["nextCursor"]
    emit("BOOKING_CREATED", "after", user=user)
    later = api_client.get("/v1/events", {"cursor": empty["nextCursor"]}, **headers).json()
    assert [event["payload"]["uid"] for event in later["events"]] == ["after"]


def test_a_late_commit_is_never_skipped(api_client):
    """Transaction A writes its event first but commits last; B's event (written and committed in
    between) must not move the cursor past A's."""
    user = UserFactory()
    WebhookFactory(user=user)
    headers = auth(user)
    written, release = threading.Event(), threading.Event()

    def slow_transaction():
        try:
            with transaction.atomic():
                emit_event(trigger="BOOKING_CREATED", payload={"uid": "late"}, user=user)
                written.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_transaction)
    thread.start()
    try:
        assert written.wait(30)
        emit("BOOKING_CREATED", "early", user=user)
        while_open = api_client.get("/v1/events", {"since": an_hour_ago()}, **headers).json()
        assert while_open["events"] == []  # "early" waits behind the open transaction
    finally:
        release.set()
        thread.join(30)

    after = api_client.get("/v1/events", {"cursor": while_open["nextCursor"]}, **headers).json()
    assert [event["payload"]["uid"] for event in after["events"]] == ["late", "early"]


def test_the_feed_shows_own_and_managed_teams_events_only(api_client):
    user, stranger = UserFactory(), UserFactory()
    managed, member_only = TeamFactory(), TeamFactory()
    MembershipFactory(user=user, team=managed, role=MembershipRole.ADMIN, accepted=True)
    MembershipFactory(user=user, team=member_only, role=MembershipRole.MEMBER, accepted=True)
    own_event_type = EventTypeFactory(owner=user)
    WebhookFactory(user=user)
    WebhookFactory(user=None, event_type=own_event_type)
    WebhookFactory(user=None, team=managed)
    WebhookFactory(user=None, team=member_only)
    WebhookFactory(user=stranger)
    emit("BOOKING_CREATED", "own", user=user)
    emit("BOOKING_CREATED", "event-type", event_type=own_event_type)
    emit("BOOKING_CREATED", "managed", team=managed)
    emit("BOOKING_CREATED", "member-only", team=member_only)
    emit("BOOKING_CREATED", "stranger", user=stranger)
    WebhookDelivery.objects.create(
        webhook=WebhookFactory(user=user, subscriber_url="http://127.0.0.1:9/ping"),
        trigger_event="PING",
        payload={"uid": "ping"},
        event_created_at=timezone.now(),
        message_id="msg_ping",
        status=DeliveryStatus.SUCCEEDED,
    )

    events, _ = read_all(api_client, auth(user))

    # "event-type" reaches the event type's webhook and its owner's own webhook.
    assert sorted(event["payload"]["uid"] for event in events) == ["event-type", "event-type", "managed", "own"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({}, "since"),
        ({"since": "soon"}, "since"),
        ({"since": iso_utc(timezone.now() - timedelta(days=45))}, "since"),
        ({"cursor": "bm9wZQ"}, "cursor"),
        ({"cursor": "ZC4x"}, "cursor"),  # a delivery-log cursor
        ({"since": "RECENT", "types": "BOOKING_CREATED,NOPE"}, "types"),
        ({"since": "RECENT", "webhookId": "abc"}, "webhookId"),
        ({"since": "RECENT", "take": "501"}, "take"),
    ],
)
def test_bad_queries_are_400_naming_the_parameter(api_client, query, field):
    query = {key: an_hour_ago() if value == "RECENT" else value for key, value in query.items()}
    response = api_client.get("/v1/events", query, **auth(UserFactory()))
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_the_feed_needs_read_webhook(api_client):
    user = UserFactory()
    response = api_client.get("/v1/events", {"since": an_hour_ago()}, **auth(user, "READ_BOOKING"))
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert api_client.get("/v1/events", {"since": an_hour_ago()}).status_code == 401


def test_the_document_describes_the_feed(api_client):
    document = api_client.get("/v1/openapi.json").json()
    operation = document["paths"]["/v1/events"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"since", "cursor", "types", "webhookId"}
    assert {"200", "400", "401", "403"} <= set(operation["responses"])
    assert WebhookTrigger.BOOKING_CREATED in str(operation)
