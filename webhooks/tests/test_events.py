"""emit_event (the outbox), its enqueue on the broker and the MEETING_* scheduled triggers, in-process."""

import base64
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta

import pytest
import redis
from django.db import transaction
from django.utils import timezone

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from scheduling.models import BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.live_services import ROOT
from webhooks.dispatch import enqueue_deliveries
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookScheduledTrigger, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.scheduled import cancel_meeting_triggers, fire_due_scheduled_triggers, schedule_meeting_triggers
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

CLOSED_PORT = "redis://127.0.0.1:1/0"
CREATED = WebhookTrigger.BOOKING_CREATED
MEETING = [WebhookTrigger.MEETING_STARTED, WebhookTrigger.MEETING_ENDED]


def test_emit_event_writes_one_pending_delivery_per_subscribed_webhook(django_capture_on_commit_callbacks):
    user = UserFactory()
    subscribed = WebhookFactory(user=user, event_triggers=[CREATED, WebhookTrigger.BOOKING_CANCELLED])
    WebhookFactory(user=user, event_triggers=[WebhookTrigger.BOOKING_CANCELLED])
    WebhookFactory(user=user, active=False)
    WebhookFactory()  # someone else's

    with django_capture_on_commit_callbacks() as callbacks:
        deliveries = emit_event(trigger=CREATED, payload={"title": "x"}, user=user)

    assert [delivery.webhook for delivery in deliveries] == [subscribed]
    [delivery] = WebhookDelivery.objects.all()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.payload == {"title": "x"}
    assert delivery.message_id.startswith("msg_")
    assert delivery.next_attempt_at is not None and delivery.lease_expires_at > delivery.next_attempt_at
    assert len(callbacks) == 1


def test_emit_event_for_event_type_reaches_its_owner_and_team_webhooks():
    owner = UserFactory()
    team = TeamFactory()
    personal_type = EventTypeFactory(owner=owner)
    team_type = EventTypeFactory(owner=None, team=team, schedule=None)
    on_type = WebhookFactory(user=None, event_type=personal_type)
    owner_level = WebhookFactory(user=owner)
    team_level = WebhookFactory(user=None, team=team)
    on_team_type = WebhookFactory(user=None, event_type=team_type)
    WebhookFactory(user=None, event_type=EventTypeFactory(owner=owner))  # another event type

    personal = emit_event(trigger=CREATED, payload={}, event_type=personal_type)
    teams = emit_event(trigger=CREATED, payload={}, event_type=team_type)

    assert {delivery.webhook for delivery in personal} == {on_type, owner_level}
    assert {delivery.webhook for delivery in teams} == {on_team_type, team_level}


def test_emit_event_in_rolled_back_transaction_leaves_no_delivery(django_capture_on_commit_callbacks):
    webhook = WebhookFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            emit_event(trigger=CREATED, payload={}, user=webhook.user)
            raise RuntimeError("the booking failed")
    assert not WebhookDelivery.objects.exists()
    assert callbacks == []


def test_meeting_triggers_are_scheduled_at_start_and_end_of_accepted_booking():
    user = UserFactory()
    webhook = WebhookFactory(user=user, event_triggers=MEETING)
    WebhookFactory(user=user, event_triggers=[CREATED])
    booking = BookingFactory(organizer=user)

    schedule_meeting_triggers(booking=booking)

    rows = {(row.webhook_id, row.trigger_event): row.start_after for row in WebhookScheduledTrigger.objects.all()}
    assert rows == {
        (webhook.pk, WebhookTrigger.MEETING_STARTED): booking.start_time,
        (webhook.pk, WebhookTrigger.MEETING_ENDED): booking.end_time,
    }


def test_rescheduling_moves_pending_triggers_and_cancelling_removes_them():
    webhook = WebhookFactory(event_triggers=MEETING)
    booking = BookingFactory(organizer=webhook.user)
    schedule_meeting_triggers(booking=booking)

    booking.start_time += timedelta(days=2)
    booking.end_time += timedelta(days=2)
    booking.save()
    schedule_meeting_triggers(booking=booking)
    assert sorted(WebhookScheduledTrigger.objects.values_list("start_after", flat=True)) == [
        booking.start_time,
        booking.end_time,
    ]

    booking.status = BookingStatus.CANCELLED
    booking.save()
    cancel_meeting_triggers(booking=booking)
    assert not WebhookScheduledTrigger.objects.exists()


def test_non_accepted_booking_has_no_meeting_triggers():
    webhook = WebhookFactory(event_triggers=MEETING)
    booking = BookingFactory(organizer=webhook.user, status=BookingStatus.PENDING)
    schedule_meeting_triggers(booking=booking)
    assert not WebhookScheduledTrigger.objects.exists()


def test_due_triggers_fire_into_deliveries_at_start_then_at_end():
    webhook = WebhookFactory(event_triggers=MEETING)
    booking = BookingFactory(organizer=webhook.user)
    schedule_meeting_triggers(booking=booking)

    assert fire_due_scheduled_triggers(now=booking.start_time - timedelta(seconds=1)) == 0
    assert fire_due_scheduled_triggers(now=booking.start_time) == 1
    [started] = WebhookDelivery.objects.all()
    assert started.trigger_event == WebhookTrigger.MEETING_STARTED
    assert started.payload["triggerEvent"] == WebhookTrigger.MEETING_STARTED
    assert (started.payload["id"], started.payload["uid"]) == (booking.pk, booking.uid)
    assert started.payload["startTime"] == booking.start_time.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert list(WebhookScheduledTrigger.objects.values_list("trigger_event", flat=True)) == ["MEETING_ENDED"]

    assert fire_due_scheduled_triggers(now=booking.end_time) == 1
    assert list(WebhookDelivery.objects.values_list("trigger_event", flat=True).order_by("id")) == [
        "MEETING_STARTED",
        "MEETING_ENDED",
    ]
    assert not WebhookScheduledTrigger.objects.exists()


def test_trigger_of_webhook_deactivated_meanwhile_fires_nothing():
    webhook = WebhookFactory(event_triggers=MEETING)
    booking = BookingFactory(organizer=webhook.user)
    schedule_meeting_triggers(booking=booking)
    webhook.active = False
    webhook.save()

    fire_due_scheduled_triggers(now=booking.end_time)

    assert not WebhookDelivery.objects.exists()
    assert not WebhookScheduledTrigger.objects.exists()


def test_team_webhook_hears_meetings_of_team_event_types():
    team = TeamFactory()
    MembershipFactory(team=team)
    event_type = EventTypeFactory(owner=None, team=team, schedule=None)
    webhook = WebhookFactory(user=None, team=team, event_triggers=MEETING)
    booking = BookingFactory(event_type=event_type)
    schedule_meeting_triggers(booking=booking)
    assert WebhookScheduledTrigger.objects.filter(webhook=webhook).count() == 2


def test_sweeper_takes_back_due_deliveries_whose_lease_expired_and_leaves_leased_ones(
    django_capture_on_commit_callbacks,
):
    from webhooks.delivery import sweep

    webhook = WebhookFactory()
    lost, leased, later = (emit_event(trigger=CREATED, payload={}, user=webhook.user)[0] for _ in range(3))
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=lost.pk).update(
        status=DeliveryStatus.DELIVERING, lease_expires_at=now - timedelta(seconds=1)
    )
    WebhookDelivery.objects.filter(pk=later.pk).update(next_attempt_at=now + timedelta(hours=1), lease_expires_at=None)

    with django_capture_on_commit_callbacks() as callbacks:
        assert sweep() == 1

    lost.refresh_from_db()
    assert lost.status == DeliveryStatus.PENDING and lost.lease_expires_at > now
    assert len(callbacks) == 1
    leased.refresh_from_db()
    assert leased.status == DeliveryStatus.PENDING


def read_broker_queue(settings) -> list[dict]:
    """The messages waiting in Celery's default queue, oldest first (then emptied)."""
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    raw_messages = broker.lrange("celery", 0, -1)
    broker.delete("celery")
    return [json.loads(raw) for raw in reversed(raw_messages)]  # LPUSH puts the newest first


def task_call(message: dict) -> tuple:
    args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
    return message["headers"]["task"], args, kwargs, message["headers"]["eta"]


def test_enqueue_deliveries_puts_one_message_per_delivery_on_the_broker(settings):
    read_broker_queue(settings)

    enqueue_deliveries([11, 12, 13])

    assert [task_call(message) for message in read_broker_queue(settings)] == [
        ("webhooks.deliver", [11], {}, None),
        ("webhooks.deliver", [12], {}, None),
        ("webhooks.deliver", [13], {}, None),
    ]


def test_enqueued_retries_carry_their_countdown(settings):
    read_broker_queue(settings)
    before = timezone.now()

    enqueue_deliveries([21, 22], countdown=5)

    calls = [task_call(message) for message in read_broker_queue(settings)]
    assert [call[:3] for call in calls] == [("webhooks.deliver", [21], {}), ("webhooks.deliver", [22], {})]
    for *_, eta in calls:
        assert before + timedelta(seconds=5) <= datetime.fromisoformat(eta) <= timezone.now() + timedelta(seconds=5)


def test_a_broker_that_is_down_makes_the_enqueue_log_and_return():
    """In a process whose broker is a closed port: the on-commit enqueue logs the deliveries and
    returns (the committed request still answers); their leases bring the sweeper to them later."""
    script = (
        "import django; django.setup(); from webhooks.dispatch import enqueue_deliveries; enqueue_deliveries([1, 2])"
    )
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test", "CELERY_BROKER_URL": CLOSED_PORT}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Could not enqueue webhook deliveries [1, 2]; the sweeper will pick them up" in result.stderr
