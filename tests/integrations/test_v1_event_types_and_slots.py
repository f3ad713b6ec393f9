"""Event types and slots as Cal.com's API v1 answered them, for clients written against it.

calcom/cal.com, apps/api/v1/pages/api/event-types/_get.ts and [id]/_get.ts: the list is
`{"event_types": [...]}`, `?slug=` narrows it, and a personal event type without a schedule of its
own answers the owner's default schedule as `scheduleId`; apps/api/v1/pages/api/slots/_get.ts:
`{"slots": {"YYYY-MM-DD": [{"time": "…+HH:MM"}]}}`, each time with the requested zone's offset.
"""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import MembershipRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db


def with_key(user) -> str:
    return f"apiKey={ApiKeyFactory(user=user).raw_key}"


def user_with_default_schedule():
    user = UserFactory()
    schedule = ScheduleFactory(user=user)
    user.default_schedule = schedule
    user.save(update_fields=["default_schedule"])
    return user, schedule


# calcom/cal.com apps/api/v1/pages/api/event-types/_get.ts: `defaultScheduleId` fills `scheduleId`.
def test_list_answers_the_owners_default_schedule_for_event_types_without_one(api_client):
    user, default = user_with_default_schedule()
    own_schedule = ScheduleFactory(user=user)
    inherits = EventTypeFactory(owner=user, schedule=None)
    pinned = EventTypeFactory(owner=user, schedule=own_schedule)

    rows = api_client.get(f"/event-types?{with_key(user)}").json()["event_types"]

    assert {row["id"]: row["scheduleId"] for row in rows} == {inherits.pk: default.pk, pinned.pk: own_schedule.pk}


# calcom/cal.com apps/api/v1/pages/api/event-types/[id]/_get.ts: the same for one event type, but
# not for a team's event type ("user.defaultScheduleId doesn't work the same for team events").
def test_get_one_answers_the_default_schedule_but_not_for_team_event_types(api_client):
    user, default = user_with_default_schedule()
    team = TeamFactory()
    MembershipFactory(user=user, team=team, role=MembershipRole.OWNER, accepted=True)
    personal = EventTypeFactory(owner=user, schedule=None)
    team_type = EventTypeFactory(owner=None, team=team, schedule=None)
    query = with_key(user)

    assert api_client.get(f"/v1/event-types/{personal.pk}?{query}").json()["event_type"]["scheduleId"] == default.pk
    assert api_client.get(f"/v1/event-types/{team_type.pk}?{query}").json()["event_type"]["scheduleId"] is None


# calcom/cal.com apps/api/v1/pages/api/event-types/_get.ts: a user without any schedule.
def test_event_type_of_a_user_without_schedules_answers_null(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user, schedule=None)

    row = api_client.get(f"/v1/event-types/{event_type.pk}?{with_key(user)}").json()["event_type"]

    assert row["scheduleId"] is None


# calcom/cal.com apps/api/v1/pages/api/event-types/_get.ts looked the default schedules up in one
# more query; here they come with the owner, whatever the number of event types.
def test_default_schedule_costs_no_query_per_event_type(api_client):
    user, _ = user_with_default_schedule()
    query = with_key(user)
    EventTypeFactory(owner=user, schedule=None)
    api_client.get(f"/v1/event-types?{query}")  # the first request warms per-process caches

    with CaptureQueriesContext(connection) as one:
        api_client.get(f"/v1/event-types?{query}")
    EventTypeFactory.create_batch(49, owner=user, schedule=None)
    with CaptureQueriesContext(connection) as fifty:
        rows = api_client.get(f"/v1/event-types?{query}").json()["event_types"]

    assert len(rows) == 50 and all(row["scheduleId"] is not None for row in rows)
    assert len(fifty) == len(one)


# calcom/cal.com apps/api/v1/pages/api/event-types/_get.ts: `?slug=` (schemaQuerySlug).
def test_slug_filter_narrows_the_list_to_visible_event_types(api_client):
    user = UserFactory()
    wanted = EventTypeFactory(owner=user, slug="intro")
    EventTypeFactory(owner=user, slug="deep-dive")
    EventTypeFactory(slug="intro")  # someone else's, same slug
    query = with_key(user)

    rows = api_client.get(f"/v1/event-types?slug=intro&{query}").json()
    assert [row["id"] for row in rows["event_types"]] == [wanted.pk]
    assert rows["pagination"]["total"] == 1
    assert api_client.get(f"/v1/event-types?slug=nothing-here&{query}").json()["event_types"] == []


# calcom/cal.com apps/api/v1/pages/api/event-types/_get.ts: `?userId=` is for system admins only.
def test_user_id_filter_of_another_user_is_403_for_a_non_admin(api_client):
    user = UserFactory()
    other = UserFactory()
    EventTypeFactory(owner=other)

    response = api_client.get(f"/v1/event-types?userId={other.pk}&{with_key(user)}")

    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "permission_denied"


# calcom/cal.com apps/api/v1/pages/api/slots/_get.ts: the answer's shape, and each time formatted in
# the requested zone with its offset and without fractions of a second (dayjs `.tz(zone).format()`).
def test_slots_answer_shape_and_time_format(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="Europe/Berlin"))
    start = (timezone.now() + timedelta(days=7)).date()

    response = api_client.get(
        f"/v1/slots?eventTypeId={event_type.pk}&startTime={start}&endTime={start + timedelta(days=6)}"
        f"&timeZone=America/New_York&{with_key(user)}"
    )

    assert response.status_code == 200
    slots = response.json()["slots"]
    assert set(response.json()) == {"slots"}
    assert slots and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", day) for day in slots)
    times = [slot["time"] for day in slots.values() for slot in day]
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-0[45]:00", time) for time in times)
    assert all(time.startswith(day) for day, day_slots in slots.items() for time in (s["time"] for s in day_slots))


# calcom/cal.com apps/api/v1/pages/api/slots/_get.ts: `endTime` must be after `startTime`.
def test_slots_with_end_before_start_is_400(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user)

    response = api_client.get(
        f"/v1/slots?eventTypeId={event_type.pk}&startTime=2026-12-05T00:00:00Z&endTime=2026-12-01T00:00:00Z"
        f"&{with_key(user)}"
    )

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert "endTime" in response.json()["errors"]
