"""The same booking request through every door gives the same result: POST /v1/bookings, POST
/v2/bookings in each `cal-api-version` (v1's body for 2024-04-15 and the versions that fall back to
it, Cal.com's 2024-08-13 body for the others), and the reschedules and cancellations of both.

Each door is tried on the same event type and slot inside a savepoint that is rolled back, so that
the stored bookings, attendees, payments and webhook payloads of each can be compared with v1's.
Every answer is checked against its version's document (conftest.py, calv2/tests/conftest.py)."""

from datetime import timedelta

import pytest
from django.db import transaction

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from calv2.tests.helpers import (
    V1_BODY_VERSIONS,
    V2_BODY_VERSIONS,
    WEEKLY_4,
    booking_at,
    event_type_of,
    monday_ahead,
    v1_body,
    v2_body,
    z,
)
from scheduling.models import Booking, BookingStatus
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

DOORS = ["v1", *(("v2", version) for version in V1_BODY_VERSIONS), *(("v2", version) for version in V2_BODY_VERSIONS)]
# What differs between two bookings written alike: their keys and clocks.
VOLATILE = {"id", "uid", "bookingId", "iCalUID", "createdAt", "updatedAt", "recurringEventId", "paymentId"}
VOLATILE |= {"paymentUid", "bookingUid", "icsUid", "startedAt", "iCalSequence"}


@pytest.fixture
def host(owner):
    WebhookFactory(user=owner, event_triggers=list(WebhookTrigger.values), subscriber_url="http://127.0.0.1:9/hook")
    return owner


def book(door, v2, event_type, start, **request):
    """POST the booking request through `door`; the answer's status and the uids it names."""
    if door == "v1":
        response = v2.client.post(
            "/v1/bookings", v1_body(event_type, start, **request), format="json", **bearer(v2.key)
        )
        return response.status_code, [response.json()["uid"]] if response.status_code == 200 else []
    _, version = door
    body = v2_body if version in V2_BODY_VERSIONS else v1_body
    response = v2.call("POST", "/v2/bookings", body(event_type, start, **request), version=version)
    if response.status_code != 201:
        assert response.json()["status"] == "error"
        return response.status_code, []
    data = response.json()["data"]
    return 201, [item["uid"] for item in data] if isinstance(data, list) else [data["uid"]]


def neutral(value):
    """`value` without what differs between two bookings written alike."""
    if isinstance(value, dict):
        return {key: neutral(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [neutral(item) for item in value]
    return value


def stored() -> list[tuple]:
    rows = []
    for booking in Booking.objects.order_by("start_time", "id").prefetch_related("attendees", "payments"):
        rows.append(
            (
                booking.event_type_id,
                booking.organizer_id,
                booking.title,
                booking.description,
                booking.start_time,
                booking.end_time,
                booking.status,
                booking.location,
                booking.metadata,
                booking.responses,
                booking.custom_inputs,
                bool(booking.recurring_event_id),
                booking.rescheduled,
                booking.cancellation_reason,
                booking.cancelled_by,
                [(a.name, a.email, a.time_zone, a.locale) for a in sorted(booking.attendees.all(), key=lambda a: a.pk)],
                [(p.amount, p.currency, p.success) for p in booking.payments.all()],
            )
        )
    return rows


def delivered() -> list[tuple]:
    return [(d.trigger_event, neutral(d.payload)) for d in WebhookDelivery.objects.order_by("id")]


def through_every_door(action) -> dict:
    """`action(door)` through each door, each in a savepoint rolled back afterwards: what it
    answered, stored and sent."""
    outcomes = {}
    for door in DOORS:
        with transaction.atomic():
            status, uids = action(door)
            outcomes[door] = {"status": status, "count": len(uids), "stored": stored(), "sent": delivered()}
            transaction.set_rollback(True)
    return outcomes


def assert_same_as_v1(outcomes: dict, *, status_v1: int, status_v2: int) -> None:
    expected = outcomes["v1"]
    assert expected["status"] == status_v1
    for door, outcome in outcomes.items():
        if door == "v1":
            continue
        assert outcome["status"] == status_v2, door
        assert outcome["stored"] == expected["stored"], door
        assert outcome["sent"] == expected["sent"], door


# --- new bookings -------------------------------------------------------------------------------


def test_a_single_booking_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host)

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead()))

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert [row[6] for row in outcomes["v1"]["stored"]] == [BookingStatus.ACCEPTED]
    assert [trigger for trigger, _ in outcomes["v1"]["sent"]] == [WebhookTrigger.BOOKING_CREATED]


def test_a_series_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host, recurring_event=WEEKLY_4)

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead(), count=3))

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert len(outcomes["v1"]["stored"]) == 3
    assert all(row[11] for row in outcomes["v1"]["stored"])  # each of the series
    # v2 2024-08-13 answers every occurrence, v1's body the first.
    assert {door: outcome["count"] for door, outcome in outcomes.items()} == {
        door: 3 if door != "v1" and door[1] in V2_BODY_VERSIONS else 1 for door in DOORS
    }


def test_a_paid_booking_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host, price=2500, currency="eur")

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead()))

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert outcomes["v1"]["stored"][0][16] == [(2500, "eur", False)]
    assert [trigger for trigger, _ in outcomes["v1"]["sent"]] == [
        WebhookTrigger.BOOKING_CREATED,
        WebhookTrigger.BOOKING_PAYMENT_INITIATED,
    ]


def test_a_booking_requiring_confirmation_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host, requires_confirmation=True)

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead()))

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert [row[6] for row in outcomes["v1"]["stored"]] == [BookingStatus.PENDING]
    assert [trigger for trigger, _ in outcomes["v1"]["sent"]] == [WebhookTrigger.BOOKING_REQUESTED]


@pytest.mark.parametrize("slug", [False, True], ids=["by-id", "by-slug"])
def test_a_team_booking_is_the_same_through_every_door(v2, host, slug):
    team = TeamFactory()
    MembershipFactory(user=host, team=team)
    member = UserFactory(username="hopper-colleague")
    event_type = EventTypeFactory(owner=None, team=team, schedule=ScheduleFactory(user=member, time_zone="UTC"))

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead(), slug=slug))

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert outcomes["v1"]["stored"][0][1] == member.pk


def test_a_booking_by_slug_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host)

    by_slug = through_every_door(lambda door: book(door, v2, event_type, monday_ahead(), slug=True))
    by_id = through_every_door(lambda door: book(door, v2, event_type, monday_ahead()))

    assert_same_as_v1(by_slug, status_v1=200, status_v2=201)
    assert by_slug["v1"]["stored"] == by_id["v1"]["stored"]


# --- reschedule and cancel -----------------------------------------------------------------------


def _existing(host, event_type, start):
    return booking_at(
        host, event_type, start, attendees=[{"name": "Ada Lovelace", "email": "ada@example.org", "time_zone": "UTC"}]
    )


def test_a_reschedule_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host)
    booking = _existing(host, event_type, monday_ahead())
    later = monday_ahead() + timedelta(hours=2)

    def reschedule(door):
        if door == "v1":
            body = {"start": z(later), "rescheduleReason": "Clash"}
            response = v2.client.post(f"/v1/bookings/{booking.pk}/reschedule", body, format="json", **bearer(v2.key))
            return response.status_code, [response.json()["booking"]["uid"]]
        body = {"start": z(later), "reschedulingReason": "Clash"}
        response = v2.call("POST", f"/v2/bookings/{booking.uid}/reschedule", body, version=door[1])
        return response.status_code, [response.json()["data"]["uid"]]

    outcomes = through_every_door(reschedule)

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert [(row[4], row[6], row[12]) for row in outcomes["v1"]["stored"]] == [
        (monday_ahead(), BookingStatus.CANCELLED, True),
        (later, BookingStatus.ACCEPTED, False),
    ]
    assert [trigger for trigger, _ in outcomes["v1"]["sent"]] == [WebhookTrigger.BOOKING_RESCHEDULED]


def test_a_cancellation_is_the_same_through_every_door(v2, host):
    event_type = event_type_of(host)
    booking = _existing(host, event_type, monday_ahead())

    def cancel(door):
        body = {"cancellationReason": "Ill"}
        if door == "v1":
            response = v2.client.delete(f"/v1/bookings/{booking.pk}", body, format="json", **bearer(v2.key))
        else:
            response = v2.call("POST", f"/v2/bookings/{booking.uid}/cancel", body, version=door[1])
        return response.status_code, [booking.uid]

    outcomes = through_every_door(cancel)

    assert_same_as_v1(outcomes, status_v1=200, status_v2=200)
    assert [(row[6], row[13], row[14]) for row in outcomes["v1"]["stored"]] == [
        (BookingStatus.CANCELLED, "Ill", host.email)
    ]
    assert [trigger for trigger, _ in outcomes["v1"]["sent"]] == [WebhookTrigger.BOOKING_CANCELLED]


# --- refusals: the same decision, nothing stored, nothing sent -----------------------------------


def test_a_taken_slot_is_a_409_through_every_door(v2, host):
    event_type = event_type_of(host)
    _existing(host, event_type, monday_ahead())
    before = stored()

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead()))

    assert_same_as_v1(outcomes, status_v1=409, status_v2=409)
    assert outcomes["v1"]["stored"] == before
    assert outcomes["v1"]["sent"] == []


def test_an_unknown_event_type_is_refused_through_every_door(v2, host):
    event_type = event_type_of(host)
    event_type.pk = 10**9  # an id no event type has

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead()))

    # v1 answered it as a 400 naming eventTypeId, Cal.com's v2 as a 404.
    assert_same_as_v1(outcomes, status_v1=400, status_v2=404)
    assert outcomes["v1"]["stored"] == [] and outcomes["v1"]["sent"] == []


@pytest.mark.parametrize(
    ("recurring_event", "count"),
    [(WEEKLY_4, 5), (None, 3)],
    ids=["more-than-the-event-type-recurs", "a-one-off-event-type"],
)
def test_a_series_the_event_type_does_not_offer_is_a_400_through_every_door(v2, host, recurring_event, count):
    event_type = event_type_of(host, recurring_event=recurring_event)

    outcomes = through_every_door(lambda door: book(door, v2, event_type, monday_ahead(), count=count))

    assert_same_as_v1(outcomes, status_v1=400, status_v2=400)
    assert outcomes["v1"]["stored"] == [] and outcomes["v1"]["sent"] == []


def test_a_slot_outside_the_schedule_is_a_409_through_every_door(v2, host):
    event_type = event_type_of(host)
    sunday = monday_ahead() - timedelta(days=1)

    outcomes = through_every_door(lambda door: book(door, v2, event_type, sunday))

    assert_same_as_v1(outcomes, status_v1=409, status_v2=409)
    assert outcomes["v1"]["stored"] == [] and outcomes["v1"]["sent"] == []


def test_booking_as_another_user_is_refused_by_every_door_that_takes_user_id(v2, host):
    event_type = event_type_of(host)
    other = UserFactory()
    v1_doors = ["v1", *(("v2", version) for version in V1_BODY_VERSIONS)]

    answers = {}
    for door in v1_doors:
        answers[door] = book(door, v2, event_type, monday_ahead(), userId=other.pk)[0]

    assert set(answers.values()) == {403}
    assert not Booking.objects.exists()


def test_the_callers_own_user_id_books_through_every_door_that_takes_it(v2, host):
    event_type = event_type_of(host)

    outcomes = through_every_door(
        lambda door: book(door, v2, event_type, monday_ahead(), **({"userId": host.pk} if _v1_body(door) else {}))
    )

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)


def _v1_body(door) -> bool:
    return door == "v1" or door[1] in V1_BODY_VERSIONS


def test_a_rebooking_with_reschedule_uid_is_the_same_through_every_door_with_v1s_body(v2, host):
    event_type = event_type_of(host)
    booking = _existing(host, event_type, monday_ahead())
    later = monday_ahead() + timedelta(hours=3)
    v1_doors = ["v1", *(("v2", version) for version in V1_BODY_VERSIONS)]

    outcomes = {
        door: outcome
        for door, outcome in through_every_door(
            lambda door: book(door, v2, event_type, later, rescheduleUid=booking.uid) if _v1_body(door) else (0, [])
        ).items()
        if door in v1_doors
    }

    assert_same_as_v1(outcomes, status_v1=200, status_v2=201)
    assert [(row[6], row[12]) for row in outcomes["v1"]["stored"]] == [
        (BookingStatus.CANCELLED, True),
        (BookingStatus.ACCEPTED, False),
    ]
    assert [trigger for trigger, _ in outcomes["v1"]["sent"]] == [WebhookTrigger.BOOKING_RESCHEDULED]
