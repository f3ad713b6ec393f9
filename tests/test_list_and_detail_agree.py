"""A list and a detail describe an object the same way: `GET /v1/<resource>` and
`GET /v1/<resource>/{id}` answer the same keys for one object, nested objects included, whichever
read path (row reads for lists, the ORM for details) each one takes."""

import pytest
from django.utils import timezone

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.credentials import auth
from webhooks.models import DeliveryAttempt, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


def shape(value):
    """The keys of a body, recursively; list items each keep their own shape."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return None


def schedule(user):
    made = ScheduleFactory(user=user)
    EventTypeFactory(owner=user, schedule=made)
    return "schedules", "schedule", str(made.pk)


def event_type(user):
    return "event-types", "event_type", str(EventTypeFactory(owner=user).pk)


def booking(user):
    made = BookingFactory(organizer=user, attendees=[{}, {}])
    PaymentFactory(booking=made)
    return "bookings", "booking", str(made.pk)


def payment(user):
    return "payments", "payment", str(PaymentFactory(booking=BookingFactory(organizer=user)).pk)


def membership(user):
    member = MembershipFactory(user=user, team=TeamFactory())
    return "memberships", "membership", f"{member.user_id}_{member.team_id}"


def team(user):
    return "teams", "team", str(MembershipFactory(user=user).team_id)


def webhook(user):
    return "webhooks", "webhook", str(WebhookFactory(user=user).pk)


def delivery(user):
    hook = WebhookFactory(user=user, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    [row] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"title": "Intro", "uid": "b1"}, user=user)
    DeliveryAttempt.objects.create(
        delivery=row, attempt_number=1, attempted_at=timezone.now(), duration_ms=12, request_url=hook.subscriber_url
    )
    return f"webhooks/{hook.pk}/deliveries", "delivery", str(row.pk)


RESOURCES = [schedule, event_type, booking, payment, membership, team, webhook, delivery]


@pytest.mark.parametrize("make", RESOURCES, ids=lambda make: make.__name__)
def test_list_and_detail_answer_the_same_keys(api_client, make):
    user = UserFactory()
    headers = auth(user)
    path, _, object_id = make(user)

    listed = api_client.get(f"/v1/{path}", **headers)
    detail = api_client.get(f"/v1/{path}/{object_id}", **headers)

    assert (listed.status_code, detail.status_code) == (200, 200)
    [singular] = [key for key in detail.json() if key != "message"]
    plural = [key for key in listed.json() if key not in ("pagination", "message")]
    [from_list] = listed.json()[plural[0]]
    from_detail = detail.json()[singular]
    assert str(from_list["id"]) == str(from_detail["id"])
    if make is delivery:
        # The one documented difference (docs/webhooks.md, delivery object): the attempt log, up to
        # ten attempts with 8 KB of response body each, is on the single-delivery endpoint only.
        attempts = from_detail.pop("attempts")
        assert "attempts" not in from_list and len(attempts) == 1
    assert shape(from_list) == shape(from_detail)
