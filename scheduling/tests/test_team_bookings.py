"""Bookings of team event types: round-robin assignment (priority, weighted fairness, concurrency),
collective bookings, team members on the booking and in webhook payloads, and reschedules."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, time, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from core.exceptions import Conflict
from payments.tests.factories import PaymentFactory
from scheduling.models import Booking, BookingHost
from scheduling.selectors.hosts import TeamHost
from scheduling.services.assignment import round_robin_choice
from scheduling.services.bookings import booking_create, booking_reschedule, booking_reschedule_as_new
from scheduling.tests.factories import (
    AvailabilityFactory,
    BookingFactory,
    EventTypeFactory,
    HostFactory,
    ScheduleFactory,
    TeamEventTypeFactory,
)
from tests.support.credentials import bearer
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory
from webhooks.tests.test_payload_schemas import assert_valid

MINUTE = timedelta(minutes=1)


def next_monday() -> datetime:
    today = timezone.now().astimezone(UTC).date()
    return datetime.combine(today + timedelta(days=(7 - today.weekday()) % 7 + 7), time(0), tzinfo=UTC)


def host_user(event_type, **host_fields):
    """A user who works every day 00:00-24:00 UTC, as a host of `event_type`."""
    user = UserFactory()
    schedule = ScheduleFactory(
        user=user, time_zone="UTC", availability=[{"days_mask": 127, "start_time": time(0), "end_time": time(23, 59)}]
    )
    user.default_schedule = schedule
    user.save(update_fields=["default_schedule"])
    HostFactory(event_type=event_type, user=user, **host_fields)
    return user


def book(event_type, start, index=0):
    return booking_create(
        event_type=event_type,
        start=start,
        attendee_name=f"Booker {index}",
        attendee_email=f"booker{index}@example.org",
        attendee_time_zone="UTC",
    )


@pytest.fixture
def round_robin():
    return TeamEventTypeFactory(scheduling_type="ROUND_ROBIN", minimum_booking_notice=0, length=30)


@pytest.mark.django_db
def test_thirty_sequential_bookings_over_three_equal_hosts_are_shared_evenly(round_robin):
    hosts = [host_user(round_robin) for _ in range(3)]
    start = next_monday() + timedelta(hours=8)
    for index in range(30):
        book(round_robin, start + index * 30 * MINUTE, index)
    counts = [Booking.objects.filter(organizer=user).count() for user in hosts]
    assert all(9 <= count <= 11 for count in counts), counts
    assert sum(counts) == 30


@pytest.mark.django_db
def test_weights_share_bookings_in_proportion(round_robin):
    heavy, light = host_user(round_robin, weight=200), host_user(round_robin, weight=100)
    start = next_monday() + timedelta(hours=8)
    for index in range(30):
        book(round_robin, start + index * 30 * MINUTE, index)
    assert Booking.objects.filter(organizer=heavy).count() == 20
    assert Booking.objects.filter(organizer=light).count() == 10


@pytest.mark.django_db
def test_the_highest_priority_free_host_is_assigned(round_robin):
    low, high = host_user(round_robin, priority=1), host_user(round_robin, priority=4)
    start = next_monday() + timedelta(hours=8)
    assert book(round_robin, start).organizer == high
    # `high` is busy at the same time: the lower priority host takes the second booking then.
    second = booking_create(
        event_type=round_robin,
        start=start,
        attendee_name="Other",
        attendee_email="other@example.org",
        attendee_time_zone="UTC",
    )
    assert second.organizer == low
    assert book(round_robin, start + timedelta(hours=1)).organizer == high


def test_round_robin_choice_breaks_ties_by_user_id():
    hosts = [TeamHost(user=UserFactory.build(pk=pk), is_fixed=False, priority=2, weight=100) for pk in (7, 3, 5)]
    assert round_robin_choice(rotating=hosts, free_ids=[7, 3, 5], counts={7: 0, 3: 0, 5: 0}) == 3
    assert round_robin_choice(rotating=hosts, free_ids=[7, 5], counts={7: 1, 3: 0, 5: 1}) == 5
    assert round_robin_choice(rotating=hosts, free_ids=[7, 3, 5], counts={7: 0, 3: 1, 5: 1}) == 7


@pytest.mark.django_db
def test_fixed_hosts_attend_and_webhooks_carry_the_team(round_robin):
    fixed = host_user(round_robin, is_fixed=True)
    rotating = host_user(round_robin)
    webhook = WebhookFactory(user=None, team=round_robin.team, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    booking = book(round_robin, next_monday() + timedelta(hours=9))
    assert booking.organizer == rotating
    assert list(BookingHost.objects.filter(booking=booking).values_list("user_id", flat=True)) == [fixed.pk]
    delivery = WebhookDelivery.objects.get(webhook=webhook)
    body = {"triggerEvent": "BOOKING_CREATED", "createdAt": "2026-12-01T09:00:00Z", "payload": delivery.payload}
    assert_valid("BOOKING_CREATED", body)  # Cal.com's schema, the `team` key included
    payload = delivery.payload
    assert payload["organizer"]["id"] == rotating.pk
    assert payload["schedulingType"] == "ROUND_ROBIN"
    assert payload["team"]["id"] == round_robin.team_id
    assert payload["team"]["name"] == round_robin.team.name
    assert [member["email"] for member in payload["team"]["members"]] == [fixed.email]
    assert set(payload["team"]["members"][0]) >= {"name", "email", "timeZone", "language"}
    # The fixed host is busy now, so nobody can take the same time.
    with pytest.raises(Conflict):
        book(round_robin, next_monday() + timedelta(hours=9), 1)


@pytest.mark.django_db
def test_a_collective_booking_is_organized_by_the_first_host_and_attended_by_the_rest():
    event_type = TeamEventTypeFactory(scheduling_type="COLLECTIVE", minimum_booking_notice=0)
    users = sorted((host_user(event_type) for _ in range(3)), key=lambda user: user.pk)
    start = next_monday() + timedelta(hours=10)
    booking = book(event_type, start)
    assert booking.organizer == users[0]
    attending = sorted(BookingHost.objects.filter(booking=booking).values_list("user_id", flat=True))
    assert attending == [users[1].pk, users[2].pk]
    # One attending host booked elsewhere at another time removes that time for the whole team.
    other = EventTypeFactory(owner=users[2], schedule=users[2].default_schedule, minimum_booking_notice=0)
    BookingFactory(
        organizer=users[2],
        event_type=other,
        start_time=start + timedelta(hours=1),
        end_time=start + timedelta(hours=1, minutes=30),
    )
    with pytest.raises(Conflict):
        book(event_type, start + timedelta(hours=1), 1)


@pytest.mark.django_db
def test_a_reschedule_keeps_the_host_when_free_else_reassigns(round_robin):
    first, second = host_user(round_robin), host_user(round_robin)
    start = next_monday() + timedelta(hours=8)
    booking = book(round_robin, start)
    assert booking.organizer == first
    moved = booking_reschedule_as_new(booking=booking, start=start + timedelta(hours=2))
    assert moved.organizer == first
    other = EventTypeFactory(owner=first, schedule=first.default_schedule, minimum_booking_notice=0)
    busy_at = start + timedelta(hours=4)
    BookingFactory(organizer=first, event_type=other, start_time=busy_at, end_time=busy_at + 30 * MINUTE)
    again = booking_reschedule_as_new(booking=moved, start=busy_at)
    assert again.organizer == second


@pytest.mark.django_db(transaction=True)
def test_thirty_simultaneous_bookings_of_one_slot_with_three_hosts_give_one_booking_per_host():
    """Thirty threads, each with its own database connection, book the same start at once through
    the booking service (the HTTP layer adds nothing to the race)."""
    parallel = 30
    event_type = TeamEventTypeFactory(scheduling_type="ROUND_ROBIN", minimum_booking_notice=0, length=30)
    hosts = [host_user(event_type) for _ in range(3)]
    start = next_monday() + timedelta(hours=11)
    barrier = threading.Barrier(parallel)

    def attempt(index: int) -> int:
        try:
            barrier.wait(timeout=60)
            book(event_type, start, index)
            return 200
        except Conflict:
            return 409
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        statuses = list(pool.map(attempt, range(parallel)))
    assert sorted(statuses) == [200] * 3 + [409] * (parallel - 3)
    organizers = sorted(Booking.objects.filter(event_type=event_type).values_list("organizer_id", flat=True))
    assert organizers == sorted(user.pk for user in hosts)


@pytest.mark.django_db
def test_v1_booking_of_a_round_robin_event_type(api_client, round_robin):
    host = host_user(round_robin)
    key = ApiKeyFactory().raw_key
    body = {
        "eventTypeId": round_robin.pk,
        "start": (next_monday() + timedelta(hours=9)).isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "UTC",
    }
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert response.json()["userId"] == host.pk


@pytest.mark.django_db
def test_v1_and_v2_answers_list_the_attending_hosts(api_client):
    event_type = TeamEventTypeFactory(scheduling_type="COLLECTIVE", minimum_booking_notice=0)
    first, second = sorted((host_user(event_type) for _ in range(2)), key=lambda user: user.pk)
    booking = book(event_type, next_monday() + timedelta(hours=9))
    key = ApiKeyFactory(user=first).raw_key
    member = {
        "id": second.pk,
        "username": second.username,
        "name": second.name,
        "email": second.email,
        "timeZone": second.time_zone,
    }
    v1 = api_client.get(f"/v1/bookings/{booking.pk}", **bearer(key)).json()["booking"]
    assert v1["userId"] == first.pk
    assert v1["teamMembers"] == [member]
    listed = api_client.get("/v1/bookings", **bearer(key)).json()["bookings"]
    assert listed[0]["teamMembers"] == [member]
    v2 = api_client.get(f"/v2/bookings/{booking.uid}", HTTP_CAL_API_VERSION="2024-08-13", **bearer(key)).json()["data"]
    assert [host["id"] for host in v2["hosts"]] == [first.pk, second.pk]


@pytest.mark.django_db
def test_reassign_to_a_named_host_and_to_the_next_free_one(api_client, round_robin):
    first, second, third = (host_user(round_robin) for _ in range(3))
    admin = UserFactory()
    round_robin.team.memberships.create(user=admin, accepted=True, role="ADMIN")
    webhook = WebhookFactory(user=None, team=round_robin.team, event_triggers=[WebhookTrigger.BOOKING_REASSIGNED])
    booking = book(round_robin, next_monday() + timedelta(hours=9))
    assert booking.organizer == first
    payment = PaymentFactory(booking=booking)
    assert payment.organizer == first
    key = ApiKeyFactory(user=admin).raw_key
    version = {"HTTP_CAL_API_VERSION": "2024-08-13"}
    response = api_client.post(
        f"/v2/bookings/{booking.uid}/reassign/{third.pk}",
        {"reason": "Speaks German"},
        format="json",
        **version,
        **bearer(key),
    )
    assert response.status_code == 200, response.json()
    assert response.json()["data"] == {
        "bookingUid": booking.uid,
        "reassignedTo": {"id": third.pk, "name": third.name, "email": third.email},
    }
    booking.refresh_from_db()
    assert booking.organizer == third
    assert booking.metadata["reassignReason"] == "Speaks German"
    # The payment follows its booking to the new organizer's payments (and leaves the old one's).
    third_key, first_key = ApiKeyFactory(user=third).raw_key, ApiKeyFactory(user=first).raw_key
    assert [row["id"] for row in api_client.get("/v1/payments", **bearer(third_key)).json()["payments"]] == [payment.pk]
    assert api_client.get("/v1/payments", **bearer(first_key)).json()["payments"] == []
    payload = WebhookDelivery.objects.get(webhook=webhook, trigger_event="BOOKING_REASSIGNED").payload
    assert payload["organizer"]["id"] == third.pk
    automatic = api_client.post(f"/v2/bookings/{booking.uid}/reassign", **version, **bearer(key))
    assert automatic.status_code == 200, automatic.json()
    assert automatic.json()["data"]["reassignedTo"]["id"] in (first.pk, second.pk)


@pytest.mark.django_db
def test_reassign_refusals_change_nothing(api_client, round_robin):
    first, second = host_user(round_robin), host_user(round_robin)
    booking = book(round_robin, next_monday() + timedelta(hours=9))
    other = EventTypeFactory(owner=second, schedule=second.default_schedule, minimum_booking_notice=0)
    BookingFactory(organizer=second, event_type=other, start_time=booking.start_time, end_time=booking.end_time)
    key = ApiKeyFactory(user=first).raw_key
    version = {"HTTP_CAL_API_VERSION": "2024-08-13"}
    busy = api_client.post(f"/v2/bookings/{booking.uid}/reassign/{second.pk}", **version, **bearer(key))
    assert busy.status_code == 409
    nobody = api_client.post(f"/v2/bookings/{booking.uid}/reassign", **version, **bearer(key))
    assert nobody.status_code == 409
    stranger = api_client.post(f"/v2/bookings/{booking.uid}/reassign/{UserFactory().pk}", **version, **bearer(key))
    assert stranger.status_code == 400
    same = api_client.post(f"/v2/bookings/{booking.uid}/reassign/{first.pk}", **version, **bearer(key))
    assert same.status_code == 400
    outsider = api_client.post(
        f"/v2/bookings/{booking.uid}/reassign", **version, **bearer(ApiKeyFactory(user=UserFactory()).raw_key)
    )
    assert outsider.status_code == 404
    booking.refresh_from_db()
    assert booking.organizer == first


@pytest.mark.django_db
def test_a_fixed_host_sees_the_bookings_they_attend(api_client, round_robin):
    fixed = host_user(round_robin, is_fixed=True)
    host_user(round_robin)
    booking = book(round_robin, next_monday() + timedelta(hours=9))
    key = ApiKeyFactory(user=fixed).raw_key
    listed = api_client.get("/v1/bookings", **bearer(key)).json()["bookings"]
    assert [row["uid"] for row in listed] == [booking.uid]
    assert api_client.get(f"/v1/bookings/{booking.pk}", **bearer(key)).status_code == 200


@pytest.mark.django_db
def test_moving_a_team_booking_in_place_needs_its_host_free(round_robin):
    first, _ = host_user(round_robin), host_user(round_robin)
    start = next_monday() + timedelta(hours=8)
    booking = book(round_robin, start)
    assert booking.organizer == first
    day_off = (start + timedelta(days=1)).date()
    AvailabilityFactory(
        schedule=first.default_schedule, days_mask=0, date=day_off, start_time=time(0), end_time=time(0)
    )
    with pytest.raises(Conflict):  # the second host is free then, the first is off that day
        booking_reschedule(booking=booking, start=start + timedelta(days=1))
    moved = booking_reschedule(booking=booking, start=start + timedelta(hours=5))
    assert moved.organizer == first
    assert moved.start_time == start + timedelta(hours=5)
