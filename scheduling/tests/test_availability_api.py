"""GET /v1/availability (a user, or a team's members) and GET /v1/users/{id}/availability, in
Cal.com v1's shapes."""

from datetime import UTC, date, datetime, time

import pytest

from accounts.models import MembershipRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.models import Availability
from scheduling.tests.factories import AvailabilityFactory, BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

# Monday 2026-03-23 … Monday 2026-03-30: Berlin moves to summer time on Sunday 2026-03-29.
RANGE = {"dateFrom": "2026-03-23", "dateTo": "2026-03-30"}


def worker(zone="Europe/Berlin"):
    """Mon–Fri 09:00–17:00 in `zone`, with Friday 2026-03-27 overridden to 10:00–12:00."""
    user = UserFactory(time_zone=zone)
    schedule = ScheduleFactory(user=user, time_zone=zone)
    AvailabilityFactory(schedule=schedule, days_mask=0, date=date(2026, 3, 27), start_time=time(10), end_time=time(12))
    user.default_schedule = schedule
    user.save(update_fields=["default_schedule"])
    return user


def test_a_users_availability_in_v1_shapes(api_client):
    user = worker()
    own = EventTypeFactory(owner=user, after_event_buffer=10)
    start = datetime(2026, 3, 24, 9, tzinfo=UTC)  # 10:00 in Berlin
    BookingFactory(organizer=user, event_type=own, start_time=start, end_time=start.replace(hour=10))
    key = ApiKeyFactory(user=user).raw_key
    response = api_client.get("/v1/availability", {**RANGE, "userId": user.pk}, **bearer(key))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["timeZone"] == "Europe/Berlin"
    assert body["busy"] == [{"start": "2026-03-24T09:00:00Z", "end": "2026-03-24T10:10:00Z"}]
    assert body["workingHours"] == [{"days": [1, 2, 3, 4, 5], "startTime": 540, "endTime": 1020, "userId": user.pk}]
    assert body["dateOverrides"] == [{"date": "2026-03-27", "startTime": 600, "endTime": 720, "userId": user.pk}]
    assert body["currentSeats"] is None
    assert body["dateRanges"] == [
        {"start": "2026-03-23T08:00:00Z", "end": "2026-03-23T16:00:00Z"},
        {"start": "2026-03-24T08:00:00Z", "end": "2026-03-24T09:00:00Z"},
        {"start": "2026-03-24T10:10:00Z", "end": "2026-03-24T16:00:00Z"},
        {"start": "2026-03-25T08:00:00Z", "end": "2026-03-25T16:00:00Z"},
        {"start": "2026-03-26T08:00:00Z", "end": "2026-03-26T16:00:00Z"},
        {"start": "2026-03-27T09:00:00Z", "end": "2026-03-27T11:00:00Z"},
        # Summer time from Sunday: 09:00 in Berlin is 07:00Z.
        {"start": "2026-03-30T07:00:00Z", "end": "2026-03-30T15:00:00Z"},
    ]
    same = api_client.get(f"/v1/users/{user.pk}/availability", RANGE, **bearer(key))
    assert same.status_code == 200
    assert same.json() == body


def test_a_team_admin_reads_every_members_availability_in_one_call(api_client):
    team = TeamFactory()
    admin = worker()
    MembershipFactory(user=admin, team=team, role=MembershipRole.ADMIN)
    members = [worker("America/New_York"), worker("Asia/Tokyo")]
    for member in members:
        MembershipFactory(user=member, team=team)
    MembershipFactory(user=worker(), team=team, accepted=False)
    key = ApiKeyFactory(user=admin).raw_key
    response = api_client.get("/v1/availability", {**RANGE, "teamId": team.pk}, **bearer(key))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [row["userId"] for row in body] == sorted([admin.pk, *(member.pk for member in members)])
    zones = {row["userId"]: row["availability"]["timeZone"] for row in body}
    assert zones[members[0].pk] == "America/New_York"
    assert zones[members[1].pk] == "Asia/Tokyo"
    member_key = ApiKeyFactory(user=members[0]).raw_key
    refused = api_client.get("/v1/availability", {**RANGE, "teamId": team.pk}, **bearer(member_key))
    assert refused.status_code == 403
    outsider = ApiKeyFactory(user=UserFactory()).raw_key
    hidden = api_client.get("/v1/availability", {**RANGE, "teamId": team.pk}, **bearer(outsider))
    assert hidden.status_code == 404


def test_a_stranger_is_not_found_and_a_teammate_is_visible(api_client):
    caller, stranger, teammate = worker(), worker(), worker()
    team = TeamFactory()
    MembershipFactory(user=caller, team=team)
    MembershipFactory(user=teammate, team=team)
    key = ApiKeyFactory(user=caller).raw_key
    assert api_client.get("/v1/availability", {**RANGE, "userId": stranger.pk}, **bearer(key)).status_code == 404
    assert api_client.get(f"/v1/users/{stranger.pk}/availability", RANGE, **bearer(key)).status_code == 404
    assert api_client.get("/v1/availability", {**RANGE, "userId": teammate.pk}, **bearer(key)).status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        {"userId": 1},
        {"dateFrom": "2026-03-23", "dateTo": "2026-03-30"},
        {"dateFrom": "2026-03-23", "dateTo": "2026-03-30", "userId": 1, "teamId": 1},
        {"dateFrom": "2026-03-30", "dateTo": "2026-03-20", "userId": 1},
        {"dateFrom": "2026-01-01", "dateTo": "2027-12-30", "userId": 1},
        {"dateFrom": "yesterday", "dateTo": "2026-03-30", "userId": 1},
        {"dateFrom": "2026-03-23", "dateTo": "2026-03-30", "userId": "me"},
    ],
)
def test_bad_queries_are_400s(api_client, query):
    user = worker()
    query = {key: (user.pk if value == 1 else value) for key, value in query.items()}
    response = api_client.get("/v1/availability", query, **bearer(ApiKeyFactory(user=user).raw_key))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_a_user_without_a_schedule_has_busy_time_only(api_client):
    user = UserFactory(time_zone="Asia/Kolkata")
    key = ApiKeyFactory(user=user).raw_key
    body = api_client.get("/v1/availability", {**RANGE, "userId": user.pk}, **bearer(key)).json()
    assert body == {
        "busy": [],
        "timeZone": "Asia/Kolkata",
        "dateRanges": [],
        "workingHours": [],
        "dateOverrides": [],
        "currentSeats": None,
    }
    assert Availability.objects.count() == 0
