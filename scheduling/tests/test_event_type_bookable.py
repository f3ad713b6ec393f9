"""`event_type_bookable` (GET /slots, POST /bookings): who may book what, in one precompiled query
that brings what slots and bookings read next (host, schedule), with the objects the ORM builds."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db.models import Q
from django.utils import timezone

from accounts.models import User, UserRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.models import EventType, Schedule
from scheduling.selectors import event_types
from scheduling.selectors.event_types import event_type_bookable
from scheduling.selectors.slot_sources import event_type_host, event_type_schedule
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def field_values(instance) -> list:
    return [getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields]


def monday_ahead() -> datetime:
    today = timezone.now().astimezone(BERLIN).date()
    return datetime.combine(today + timedelta(days=(7 - today.weekday()) % 7 + 14), time(0), tzinfo=BERLIN)


# --- who may book what ------------------------------------------------------------------------


@pytest.fixture
def caller():
    return UserFactory()


def own_hidden(caller):
    return EventTypeFactory(owner=caller, hidden=True)


def accepted_teams_hidden(caller):
    team = TeamFactory()
    MembershipFactory(user=caller, team=team, accepted=True)
    return EventTypeFactory(owner=None, team=team, schedule=None, hidden=True)


def invited_teams_hidden(caller):
    team = TeamFactory()
    MembershipFactory(user=caller, team=team, accepted=False)
    return EventTypeFactory(owner=None, team=team, schedule=None, hidden=True)


def someone_elses_hidden(caller):
    return EventTypeFactory(hidden=True)


def someone_elses_public(caller):
    return EventTypeFactory(hidden=False)


def another_teams_public(caller):
    return EventTypeFactory(owner=None, team=TeamFactory(), schedule=None, hidden=False)


@pytest.mark.parametrize(
    ("make", "bookable"),
    [
        (own_hidden, True),
        (accepted_teams_hidden, True),
        (invited_teams_hidden, False),
        (someone_elses_hidden, False),
        (someone_elses_public, True),
        (another_teams_public, True),
    ],
)
def test_the_caller_may_book_what_they_can_see_and_anything_not_hidden(caller, make, bookable):
    event_type = make(caller)

    found = event_type_bookable(user=caller, event_type_id=event_type.pk)

    assert (found.pk if found else None) == (event_type.pk if bookable else None)


@pytest.mark.parametrize("make", [someone_elses_hidden, invited_teams_hidden])
def test_a_system_admin_may_book_any_event_type(make):
    admin = UserFactory(role=UserRole.ADMIN)

    assert event_type_bookable(user=admin, event_type_id=make(admin).pk) is not None


def test_the_bookable_lookup_is_the_orms_query_with_the_visibility_rule(caller):
    """The rule is written once (`_visible_filter`): the lookup's SQL is what the ORM writes for it
    (an expression's placeholder in parentheses)."""
    related = ("owner__default_schedule", "schedule__user", "notification_settings")
    queryset = EventType.objects.select_related(*related).filter(pk=12345).order_by()

    for system_admin, rule in ((False, event_types._visible_filter(caller) | Q(hidden=False)), (True, Q())):
        sql, _ = queryset.filter(rule).query.sql_with_params()
        assert event_types._bookable_lookup(system_admin=system_admin).sql.replace("(%s)", "%s") == sql


def test_the_bookable_lookup_follows_a_change_of_the_visibility_rule(caller, monkeypatch):
    team = TeamFactory()
    MembershipFactory(user=caller, team=team, accepted=True)
    teams_hidden = EventTypeFactory(owner=None, team=team, schedule=None, hidden=True)
    own_hidden = EventTypeFactory(owner=caller, hidden=True)
    monkeypatch.setattr(event_types, "_visible_filter", lambda user: Q(owner=user))  # no more team members
    event_types._bookable_lookup.cache_clear()
    try:
        bookable = [event_type_bookable(user=caller, event_type_id=found.pk) for found in (teams_hidden, own_hidden)]
    finally:
        event_types._bookable_lookup.cache_clear()

    assert [found.pk if found else None for found in bookable] == [None, own_hidden.pk]


@pytest.mark.parametrize("event_type_id", [0, -1, 2**31, 2**63, 10**30])
def test_an_absent_event_type_is_none(caller, event_type_id):
    EventTypeFactory(owner=caller)

    assert event_type_bookable(user=caller, event_type_id=event_type_id) is None


def test_absent_and_hidden_event_types_are_the_same_404_for_slots_and_a_400_for_bookings(api_client, caller):
    key = ApiKeyFactory(user=caller).raw_key
    hidden = EventTypeFactory(hidden=True)
    day = monday_ahead().date()
    for event_type_id in (hidden.pk, 10**30):
        response = api_client.get(
            f"/v1/slots?eventTypeId={event_type_id}&startTime={day}&endTime={day}", HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        assert response.status_code == 404
        assert response.json()["detail"] == f"Event type {event_type_id} does not exist."
        body = {
            "eventTypeId": event_type_id,
            "start": monday_ahead().isoformat(),
            "name": "A",
            "email": "a@example.org",
            "timeZone": "UTC",
        }
        response = api_client.post("/v1/bookings", body, format="json", HTTP_AUTHORIZATION=f"Bearer {key}")
        assert response.status_code == 400
        # An id past 64 bits is refused when the body is parsed (docs/api.md, "Input rules").
        expected = "does not exist." if event_type_id < 2**63 else "Integers must fit in 64 bits."
        assert response.json()["errors"]["eventTypeId"][0].endswith(expected)


# --- one query, and what comes with it ---------------------------------------------------------


def test_the_objects_are_the_ones_the_orm_builds(caller):
    event_type = EventTypeFactory(owner=caller, description="A long description", price=500)

    found = event_type_bookable(user=caller, event_type_id=event_type.pk)

    expected = EventType.objects.select_related("owner", "schedule", "schedule__user").get(pk=event_type.pk)
    assert type(found) is EventType and type(found.owner) is User and type(found.schedule) is Schedule
    assert field_values(found) == field_values(expected)
    assert field_values(found.owner) == field_values(expected.owner)
    assert field_values(found.schedule) == field_values(expected.schedule)
    assert field_values(found.schedule.user) == field_values(expected.schedule.user)
    for instance in (found, found.owner, found.schedule):
        assert not instance._state.adding and instance._state.db == "default"


def test_an_event_type_with_its_own_schedule_costs_one_query_with_host_and_schedule(caller, django_assert_num_queries):
    event_type = EventTypeFactory(owner=caller)

    with django_assert_num_queries(1):
        found = event_type_bookable(user=caller, event_type_id=event_type.pk)
        host, schedule = event_type_host(found), event_type_schedule(found)
        assert schedule.user is host  # the owner's columns are read once

    assert (host.pk, schedule.pk) == (caller.pk, event_type.schedule_id)
    assert schedule.time_zone == "Europe/Berlin"


def test_an_event_type_without_a_schedule_brings_the_owners_default_in_the_same_query(
    caller, django_assert_num_queries
):
    default = ScheduleFactory(user=caller, time_zone="Asia/Tokyo")
    caller.default_schedule = default
    caller.save()
    ScheduleFactory(user=caller)  # another of theirs, not the default
    event_type = EventTypeFactory(owner=caller, schedule=None)

    with django_assert_num_queries(1):
        found = event_type_bookable(user=caller, event_type_id=event_type.pk)
        host, schedule = event_type_host(found), event_type_schedule(found)

    assert found.schedule is None
    assert (host.pk, schedule.pk, schedule.time_zone) == (caller.pk, default.pk, "Asia/Tokyo")
    assert field_values(schedule) == field_values(Schedule.objects.get(pk=default.pk))


def test_an_event_type_without_any_schedule_has_none(caller, django_assert_num_queries):
    event_type = EventTypeFactory(owner=caller, schedule=None)

    with django_assert_num_queries(1):
        found = event_type_bookable(user=caller, event_type_id=event_type.pk)
        assert (event_type_host(found), event_type_schedule(found)) == (caller, None)


def test_a_team_event_type_is_hosted_by_its_schedules_user(caller, django_assert_num_queries):
    member = UserFactory(name="Team host")
    team = TeamFactory()
    MembershipFactory(user=member, team=team)
    event_type = EventTypeFactory(owner=None, team=team, schedule=ScheduleFactory(user=member))

    with django_assert_num_queries(1):
        found = event_type_bookable(user=caller, event_type_id=event_type.pk)
        host, schedule = event_type_host(found), event_type_schedule(found)

    assert found.owner is None and found.team_id == team.pk
    assert host is schedule.user
    assert field_values(host) == field_values(User.objects.get(pk=member.pk))


def test_a_schedule_of_someone_other_than_the_owner_brings_its_own_user(caller, django_assert_num_queries):
    """A system admin may give someone's event type one of the admin's own schedules."""
    admin = UserFactory(role=UserRole.ADMIN)
    event_type = EventTypeFactory(owner=caller, schedule=ScheduleFactory(user=admin))

    with django_assert_num_queries(1):
        found = event_type_bookable(user=caller, event_type_id=event_type.pk)
        owner, schedule_user = found.owner, found.schedule.user

    assert (owner.pk, schedule_user.pk) == (caller.pk, admin.pk)
    assert field_values(schedule_user) == field_values(User.objects.get(pk=admin.pk))


# --- through the API ---------------------------------------------------------------------------


def test_slots_of_an_event_type_on_the_owners_default_schedule_cost_four_queries(
    api_client, caller, django_assert_num_queries
):
    """Authentication, the event type with its owner and schedule, the availability, the bookings."""
    caller.default_schedule = ScheduleFactory(user=caller)
    caller.save()
    event_type = EventTypeFactory(owner=caller, schedule=None, length=60)
    key = ApiKeyFactory(user=caller).raw_key
    day = monday_ahead().date()
    url = f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"
    api_client.get(url, HTTP_AUTHORIZATION=f"Bearer {key}")  # the key's lastUsedAt write happens once a minute

    with django_assert_num_queries(4):
        response = api_client.get(url, HTTP_AUTHORIZATION=f"Bearer {key}")

    assert response.status_code == 200
    assert [slot["time"] for slot in response.json()["slots"][day.isoformat()]] == [
        monday_ahead().replace(hour=hour).isoformat() for hour in range(9, 17)
    ]


def test_a_team_event_type_is_booked_with_its_schedules_user_as_organizer(api_client, caller):
    member = UserFactory(name="Team host", time_zone="Asia/Tokyo")
    team = TeamFactory()
    MembershipFactory(user=member, team=team)
    event_type = EventTypeFactory(owner=None, team=team, schedule=ScheduleFactory(user=member), length=60)
    WebhookFactory(user=None, team=team, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    key = ApiKeyFactory(user=caller).raw_key
    start = monday_ahead().replace(hour=10)

    response = api_client.post(
        "/v1/bookings",
        {
            "eventTypeId": event_type.pk,
            "start": start.isoformat(),
            "name": "Grace",
            "email": "g@example.org",
            "timeZone": "UTC",
        },
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )

    assert response.status_code == 200, response.json()
    booking = response.json()
    assert booking["userId"] == member.pk
    assert booking["user"] == {
        "id": member.pk,
        "username": member.username,
        "name": "Team host",
        "email": member.email,
        "timeZone": "Asia/Tokyo",
    }
    [delivery] = WebhookDelivery.objects.all()
    organizer = delivery.payload["organizer"]
    assert {name: organizer[name] for name in ("id", "name", "email", "username", "timeZone")} == {
        "id": member.pk,
        "name": "Team host",
        "email": member.email,
        "username": member.username,
        "timeZone": "Asia/Tokyo",
    }
