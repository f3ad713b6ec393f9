"""Schedules over HTTP (docs/api.md, Schedules)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory
from scheduling.models import Availability, Schedule
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory()


@pytest.fixture
def key(owner):
    return ApiKeyFactory(user=owner)


def snapshot():
    """Everything a schedule write could touch, to prove a refused request changed nothing."""
    return (
        list(Schedule.objects.order_by("id").values_list("id", "name", "time_zone", "user_id")),
        list(
            Availability.objects.order_by("id").values_list(
                "id", "schedule_id", "days_mask", "start_time", "end_time", "date"
            )
        ),
        list(User.objects.order_by("id").values_list("id", "default_schedule_id")),
    )


# --- reading ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["/v1", ""])
def test_list_shows_only_the_callers_schedules_with_an_api_key(api_client, owner, key, prefix):
    mine = ScheduleFactory(user=owner)
    ScheduleFactory()
    response = api_client.get(f"{prefix}/schedules", **bearer(key.raw_key))
    assert response.status_code == 200
    body = response.json()
    assert [schedule["id"] for schedule in body["schedules"]] == [mine.pk]
    assert body["pagination"] == {
        "page": 1,
        "take": 100,
        "total": 1,
        "totalIsExact": True,
        "hasNextPage": False,
        "nextCursor": None,
    }


def test_list_and_get_with_an_oauth_token(api_client, owner):
    schedule = ScheduleFactory(user=owner)
    event_type = EventTypeFactory(owner=owner, schedule=schedule)
    owner.default_schedule = schedule
    owner.save()
    token = AccessTokenFactory(user=owner, scope="READ_SCHEDULE")
    assert api_client.get("/v1/schedules", **bearer(token.raw_token)).status_code == 200
    response = api_client.get(f"/v1/schedules/{schedule.pk}", **bearer(token.raw_token))
    assert response.status_code == 200
    assert response.json() == {
        "schedule": {
            "id": schedule.pk,
            "userId": owner.pk,
            "user": {
                "id": owner.pk,
                "username": owner.username,
                "name": owner.name,
                "email": owner.email,
                "timeZone": owner.time_zone,
            },
            "name": schedule.name,
            "timeZone": "Europe/Berlin",
            "isDefault": True,
            "availability": [
                {
                    "id": schedule.availability.get().pk,
                    "days": [1, 2, 3, 4, 5],
                    "startTime": "09:00:00",
                    "endTime": "17:00:00",
                    "date": None,
                }
            ],
            "eventType": [{"id": event_type.pk, "title": event_type.title, "slug": event_type.slug, "length": 30}],
        }
    }


def test_api_key_in_the_query_string_is_accepted(api_client, owner, key):
    ScheduleFactory(user=owner)
    assert api_client.get(f"/schedules?apiKey={key.raw_key}").status_code == 200


def test_someone_elses_schedule_is_404(api_client, key):
    # A name that cannot collide with the 404's "Schedule <id> does not exist." (the factory's can).
    other = ScheduleFactory(name="Their private schedule")
    response = api_client.get(f"/v1/schedules/{other.pk}", **bearer(key.raw_key))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert other.name not in response.content.decode()


def test_system_admin_sees_all_and_filters_by_user_id(api_client):
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN"))
    first, second = ScheduleFactory(), ScheduleFactory()
    response = api_client.get("/v1/schedules", **bearer(admin_key.raw_key))
    assert {schedule["id"] for schedule in response.json()["schedules"]} == {first.pk, second.pk}
    response = api_client.get(f"/v1/schedules?userId={second.user_id}", **bearer(admin_key.raw_key))
    assert [schedule["id"] for schedule in response.json()["schedules"]] == [second.pk]
    assert api_client.get(f"/v1/schedules/{first.pk}", **bearer(admin_key.raw_key)).status_code == 200


def test_non_admin_filtering_by_another_user_is_403(api_client, key):
    other = ScheduleFactory()
    response = api_client.get(f"/v1/schedules?userId={other.user_id}", **bearer(key.raw_key))
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


def _list_queries(api_client, key, count: int) -> int:
    for _ in range(count):
        schedule = ScheduleFactory(user=key.user, availability=[{}, {"days_mask": 1, "start_time": "10:00"}])
        EventTypeFactory(owner=key.user, schedule=schedule)
    with CaptureQueriesContext(connection) as context:
        response = api_client.get("/v1/schedules?take=500", **bearer(key.raw_key))
    assert response.status_code == 200
    assert len(response.json()["schedules"]) == Schedule.objects.filter(user=key.user).count()
    return len(context.captured_queries)


def test_list_query_count_is_constant_and_at_most_five(api_client, key):
    api_client.get("/v1/schedules", **bearer(key.raw_key))  # the key's lastUsedAt write happens once a minute
    one = _list_queries(api_client, key, 1)
    fifty = _list_queries(api_client, key, 49)
    assert one == fifty
    assert one <= 5


def test_list_count_query_reads_the_schedule_table_alone(api_client, key):
    ScheduleFactory.create_batch(2, user=key.user)
    api_client.get("/v1/schedules", **bearer(key.raw_key))  # the key's lastUsedAt write happens once a minute
    with CaptureQueriesContext(connection) as context:  # a list longer than its page is counted
        response = api_client.get("/v1/schedules?take=1", **bearer(key.raw_key))
    assert response.json()["pagination"]["total"] == 2
    (count,) = [query["sql"] for query in context.captured_queries if "COUNT(" in query["sql"]]
    assert "JOIN" not in count


# --- creating ---------------------------------------------------------------------------------------


def test_create_with_defaults_becomes_the_default_schedule(api_client, owner, key):
    response = api_client.post(
        "/v1/schedules", {"name": "Work", "timeZone": "America/New_York"}, format="json", **bearer(key.raw_key)
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["message"] == "Schedule created successfully"
    schedule = body["schedule"]
    assert response["Location"].endswith(f"/v1/schedules/{schedule['id']}")
    assert schedule["isDefault"] is True
    assert schedule["userId"] == owner.pk
    assert [(row["days"], row["startTime"], row["endTime"], row["date"]) for row in schedule["availability"]] == [
        ([1, 2, 3, 4, 5], "09:00:00", "17:00:00", None)
    ]
    owner.refresh_from_db()
    assert owner.default_schedule_id == schedule["id"]

    second = api_client.post(
        "/v1/schedules", {"name": "Evenings", "timeZone": "UTC"}, format="json", **bearer(key.raw_key)
    )
    assert second.json()["schedule"]["isDefault"] is False
    owner.refresh_from_db()
    assert owner.default_schedule_id == schedule["id"]


@pytest.mark.fastpath  # the machinery's own work, not the answer
def test_each_update_answers_its_own_schedule_as_get_shows_it_building_the_selector_once(api_client, monkeypatch):
    """The answer of a PATCH is read back with the selector's prefetches; plain ones are kept by
    the view (core.viewsets.reload), so later writes do not build the selector for them."""
    from scheduling.views.schedules import ScheduleViewSet

    callers = [ApiKeyFactory(user=UserFactory()) for _ in range(3)]
    schedules = [ScheduleFactory(user=caller.user) for caller in callers]
    monkeypatch.delattr(ScheduleViewSet, "_reload_from", raising=False)
    built = []
    selector = ScheduleViewSet.selector
    monkeypatch.setattr(ScheduleViewSet, "selector", lambda **arguments: built.append(1) or selector(**arguments))
    answers = []
    for name, caller, schedule in zip(("First", "Second", "Third"), callers, schedules, strict=True):
        body = {"name": name, "availability": [{"days": [2], "startTime": "10:00", "endTime": "11:00"}]}
        updated = api_client.patch(f"/v1/schedules/{schedule.pk}", body, format="json", **bearer(caller.raw_key))
        assert updated.status_code == 200, updated.json()
        answers.append((caller, updated.json()["schedule"]))

    # Each PATCH finds its schedule through the selector (visibility): 3; the read-back built it
    # once more, for its prefetches, the first time only.
    assert len(built) == 3 + 1
    for caller, schedule in answers:
        shown = api_client.get(f"/v1/schedules/{schedule['id']}", **bearer(caller.raw_key)).json()["schedule"]
        assert schedule == shown
        assert schedule["availability"][0]["days"] == [2]


CREATE_BODIES = {
    "defaults": {"name": "Work", "timeZone": "America/New_York"},
    "rules and overrides": {
        "name": "Mixed",
        "timeZone": "Asia/Kathmandu",
        "availability": [
            {"days": [6, 0, 3], "startTime": "10:00", "endTime": "12:30:15"},
            {"date": "2026-12-24", "startTime": "09:00", "endTime": "12:00"},
            {"days": [1], "startTime": "00:00", "endTime": "23:59:59"},
            {"date": "2026-12-25", "startTime": "00:00", "endTime": "00:00"},
        ],
    },
    "no rows": {"name": "Empty", "timeZone": "UTC", "availability": []},
    "not the default": {"name": "Side", "timeZone": "Australia/Lord_Howe", "isDefault": False},
    "unicode name": {"name": "Bür😀 \u00a0 ", "timeZone": "Europe/Berlin", "isDefault": True},
}


@pytest.mark.parametrize("credential", ["api key", "oauth token", "admin for another user"])
@pytest.mark.parametrize("body", CREATE_BODIES.values(), ids=CREATE_BODIES.keys())
def test_create_answers_exactly_what_get_shows(api_client, credential, body):
    """A create answers with the schedule as written (no read-back: scheduling.views.schedules);
    that answer is the one GET /{id} gives, for every shape of input and every kind of caller,
    whether the new schedule became the default or not."""
    owner = UserFactory()
    ScheduleFactory(user=owner)  # an older schedule, not the default: a new one may take the role
    if credential == "api key":
        headers, body = bearer(ApiKeyFactory(user=owner).raw_key), body
    elif credential == "oauth token":
        headers = bearer(AccessTokenFactory(user=owner, scope="READ_SCHEDULE WRITE_SCHEDULE").raw_token)
    else:
        headers, body = bearer(ApiKeyFactory(user=UserFactory(role="ADMIN")).raw_key), {**body, "userId": owner.pk}

    created = api_client.post("/v1/schedules", body, format="json", **headers)

    assert created.status_code == 200, created.json()
    schedule = created.json()["schedule"]
    shown = api_client.get(f"/v1/schedules/{schedule['id']}", **headers)
    assert shown.status_code == 200
    assert schedule == shown.json()["schedule"]
    assert schedule["userId"] == owner.pk and schedule["eventType"] == []
    owner.refresh_from_db()
    assert schedule["isDefault"] is (owner.default_schedule_id == schedule["id"])


@pytest.mark.fastpath  # the machinery's own work, not the answer
def test_create_reads_nothing_back_after_its_writes(api_client, owner, key):
    """The create's last statements are its writes: the answer needs no SELECT of the schedule, its
    availability or its event types."""
    api_client.get("/v1/schedules", **bearer(key.raw_key))  # the key's lastUsedAt write happens once a minute
    with CaptureQueriesContext(connection) as context:
        response = api_client.post(
            "/v1/schedules", {"name": "Work", "timeZone": "UTC"}, format="json", **bearer(key.raw_key)
        )
    assert response.status_code == 200
    reads = [query["sql"] for query in context.captured_queries if query["sql"].startswith("SELECT")]
    assert not [sql for sql in reads if "scheduling_" in sql], reads


def test_create_with_availability_and_overrides_accepts_short_times(api_client, key):
    availability = [
        {"days": [6, 0], "startTime": "10:00", "endTime": "12:30:15"},
        {"date": "2026-12-24", "startTime": "09:00", "endTime": "12:00"},
        {"date": "2026-12-25", "startTime": "00:00", "endTime": "00:00"},
    ]
    response = api_client.post(
        "/v1/schedules",
        {"name": "Weekend", "timeZone": "Asia/Tokyo", "availability": availability},
        format="json",
        **bearer(key.raw_key),
    )
    assert response.status_code == 200, response.json()
    rows = [
        (row["days"], row["startTime"], row["endTime"], row["date"])
        for row in response.json()["schedule"]["availability"]
    ]
    assert rows == [
        ([0, 6], "10:00:00", "12:30:15", None),
        ([], "09:00:00", "12:00:00", "2026-12-24"),
        ([], "00:00:00", "00:00:00", "2026-12-25"),
    ]


def test_create_with_is_default_moves_the_default(api_client, owner, key):
    first = ScheduleFactory(user=owner)
    owner.default_schedule = first
    owner.save()
    response = api_client.post(
        "/v1/schedules", {"name": "New", "timeZone": "UTC", "isDefault": True}, format="json", **bearer(key.raw_key)
    )
    owner.refresh_from_db()
    assert owner.default_schedule_id == response.json()["schedule"]["id"]


def test_admin_creates_a_schedule_for_another_user(api_client):
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN"))
    someone = UserFactory()
    response = api_client.post(
        "/v1/schedules",
        {"name": "Theirs", "timeZone": "UTC", "userId": someone.pk},
        format="json",
        **bearer(admin_key.raw_key),
    )
    assert response.status_code == 200
    assert response.json()["schedule"]["userId"] == someone.pk
    someone.refresh_from_db()
    assert someone.default_schedule_id == response.json()["schedule"]["id"]


def test_non_admin_creating_for_another_user_is_403_and_writes_nothing(api_client, key):
    someone = UserFactory()
    before = snapshot()
    response = api_client.post(
        "/v1/schedules",
        {"name": "Theirs", "timeZone": "UTC", "userId": someone.pk},
        format="json",
        **bearer(key.raw_key),
    )
    assert response.status_code == 403
    assert snapshot() == before


BAD_CREATE_BODIES = [
    ({"timeZone": "UTC"}, "name"),
    ({"name": "x"}, "timeZone"),
    ({"name": "x", "timeZone": "Mars/Olympus"}, "timeZone"),
    ({"name": "x", "timeZone": "UTC", "colour": "red"}, "colour"),
    ({"name": "x", "timeZone": "UTC", "id": 5}, "id"),
    (
        {"name": "x", "timeZone": "UTC", "availability": [{"days": [], "startTime": "09:00", "endTime": "10:00"}]},
        "availability[0].days",
    ),
    (
        {"name": "x", "timeZone": "UTC", "availability": [{"days": [1, 1], "startTime": "09:00", "endTime": "10:00"}]},
        "availability[0].days",
    ),
    (
        {"name": "x", "timeZone": "UTC", "availability": [{"days": [7], "startTime": "09:00", "endTime": "10:00"}]},
        "availability[0].days",
    ),
    (
        {"name": "x", "timeZone": "UTC", "availability": [{"days": [1], "startTime": "11:00", "endTime": "10:00"}]},
        "availability[0].endTime",
    ),
    (
        {"name": "x", "timeZone": "UTC", "availability": [{"days": [1], "startTime": "25:00", "endTime": "26:00"}]},
        "availability[0].startTime",
    ),
    (
        {"name": "x", "timeZone": "UTC", "availability": [{"days": [1], "startTime": "00:00", "endTime": "00:00"}]},
        "availability[0].endTime",
    ),
    (
        {
            "name": "x",
            "timeZone": "UTC",
            "availability": [{"date": "2026-02-30", "startTime": "09:00", "endTime": "10:00"}],
        },
        "availability[0].date",
    ),
    (
        {
            "name": "x",
            "timeZone": "UTC",
            "availability": [{"date": "2026-02-03", "days": [1], "startTime": "09:00", "endTime": "10:00"}],
        },
        "availability[0].days",
    ),
    (
        {
            "name": "x",
            "timeZone": "UTC",
            "availability": [{"days": [1], "startTime": "09:00", "endTime": "10:00", "id": 3}],
        },
        "availability[0].id",
    ),
]


@pytest.mark.parametrize("body,field", BAD_CREATE_BODIES)
def test_invalid_create_is_400_naming_the_field_and_writes_nothing(api_client, key, body, field):
    before = snapshot()
    response = api_client.post("/v1/schedules", body, format="json", **bearer(key.raw_key))
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert any(name == field or name.startswith((field + ".", field + "[")) for name in problem["errors"]), problem[
        "errors"
    ]
    assert snapshot() == before


def test_invalid_time_zone_message_names_the_value_only(api_client, key):
    response = api_client.post(
        "/v1/schedules", {"name": "x", "timeZone": "Mars/Olympus"}, format="json", **bearer(key.raw_key)
    )
    message = response.json()["errors"]["timeZone"][0]
    assert "Mars/Olympus" in message
    assert "Europe/Berlin" not in message


# --- editing and deleting -----------------------------------------------------------------------------


def test_patch_replaces_availability_and_fields(api_client, owner, key):
    schedule = ScheduleFactory(user=owner)
    response = api_client.patch(
        f"/v1/schedules/{schedule.pk}",
        {
            "name": "Renamed",
            "timeZone": "Europe/Paris",
            "availability": [{"days": [3], "startTime": "13:00", "endTime": "14:00"}],
        },
        format="json",
        **bearer(key.raw_key),
    )
    assert response.status_code == 200, response.json()
    body = response.json()["schedule"]
    assert (body["name"], body["timeZone"]) == ("Renamed", "Europe/Paris")
    assert [(row["days"], row["startTime"]) for row in body["availability"]] == [([3], "13:00:00")]
    assert schedule.availability.count() == 1


def test_patch_with_one_bad_row_changes_nothing(api_client, owner, key):
    schedule = ScheduleFactory(user=owner)
    before = snapshot()
    response = api_client.patch(
        f"/v1/schedules/{schedule.pk}",
        {
            "name": "Renamed",
            "availability": [
                {"days": [3], "startTime": "13:00", "endTime": "14:00"},
                {"days": [4], "startTime": "15:00", "endTime": "14:00"},
            ],
        },
        format="json",
        **bearer(key.raw_key),
    )
    assert response.status_code == 400
    assert "availability[1].endTime" in response.json()["errors"]
    assert snapshot() == before


@pytest.mark.parametrize(
    "body,field", [({"userId": 1}, "userId"), ({"timeZone": "Nowhere"}, "timeZone"), ({"name": ""}, "name")]
)
def test_invalid_patch_is_400_and_changes_nothing(api_client, owner, key, body, field):
    schedule = ScheduleFactory(user=owner)
    before = snapshot()
    response = api_client.patch(f"/v1/schedules/{schedule.pk}", body, format="json", **bearer(key.raw_key))
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert snapshot() == before


def test_patch_is_default_true_and_false(api_client, owner, key):
    first, second = ScheduleFactory(user=owner), ScheduleFactory(user=owner)
    owner.default_schedule = first
    owner.save()
    response = api_client.patch(f"/v1/schedules/{second.pk}", {"isDefault": True}, format="json", **bearer(key.raw_key))
    assert response.json()["schedule"]["isDefault"] is True
    owner.refresh_from_db()
    assert owner.default_schedule_id == second.pk
    api_client.patch(f"/v1/schedules/{second.pk}", {"isDefault": False}, format="json", **bearer(key.raw_key))
    owner.refresh_from_db()
    assert owner.default_schedule_id == first.pk


def test_delete_default_hands_over_to_the_oldest_remaining_then_none(api_client, owner, key):
    first, second, third = (ScheduleFactory(user=owner) for _ in range(3))
    owner.default_schedule = second
    owner.save()
    response = api_client.delete(f"/v1/schedules/{second.pk}", **bearer(key.raw_key))
    assert response.status_code == 200
    assert response.json() == {"message": f"Schedule with id: {second.pk} deleted successfully"}
    owner.refresh_from_db()
    assert owner.default_schedule_id == first.pk
    api_client.delete(f"/v1/schedules/{third.pk}", **bearer(key.raw_key))
    owner.refresh_from_db()
    assert owner.default_schedule_id == first.pk
    api_client.delete(f"/v1/schedules/{first.pk}", **bearer(key.raw_key))
    owner.refresh_from_db()
    assert owner.default_schedule_id is None
    assert not Schedule.objects.filter(user=owner).exists()


# --- credentials ---------------------------------------------------------------------------------------


def test_write_with_an_oauth_token(api_client, owner):
    token = AccessTokenFactory(user=owner, scope="WRITE_SCHEDULE")
    response = api_client.post(
        "/v1/schedules", {"name": "x", "timeZone": "UTC"}, format="json", **bearer(token.raw_token)
    )
    assert response.status_code == 200
    schedule_id = response.json()["schedule"]["id"]
    assert (
        api_client.patch(
            f"/v1/schedules/{schedule_id}", {"name": "y"}, format="json", **bearer(token.raw_token)
        ).status_code
        == 200
    )
    assert api_client.delete(f"/v1/schedules/{schedule_id}", **bearer(token.raw_token)).status_code == 200


@pytest.mark.parametrize(
    "method,path,scope",
    [
        ("get", "/v1/schedules", "READ_SCHEDULE"),
        ("get", "/v1/schedules/{id}", "READ_SCHEDULE"),
        ("post", "/v1/schedules", "WRITE_SCHEDULE"),
        ("patch", "/v1/schedules/{id}", "WRITE_SCHEDULE"),
        ("delete", "/v1/schedules/{id}", "WRITE_SCHEDULE"),
    ],
)
def test_wrong_scope_is_403_and_no_credentials_401(api_client, owner, method, path, scope):
    schedule = ScheduleFactory(user=owner)
    token = AccessTokenFactory(
        user=owner, scope="READ_PROFILE READ_SCHEDULE" if scope.startswith("WRITE") else "READ_PROFILE"
    )
    before = snapshot()
    url = path.format(id=schedule.pk)
    response = getattr(api_client, method)(
        url, {"name": "z"} if method != "get" else None, format="json", **bearer(token.raw_token)
    )
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert response["WWW-Authenticate"] == f'Bearer realm="api", error="insufficient_scope", scope="{scope}"'
    response = getattr(api_client, method)(url)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert snapshot() == before


def test_create_runs_a_fixed_number_of_queries(api_client, owner, key, django_assert_num_queries):
    """Authentication, the transaction (a savepoint inside the test's), the schedule's INSERT (which
    locks the owner's row), the availability's and the owner's new default: no query validates
    (the serializer did, and the database enforces the availability constraints), and none reads
    the answer back."""
    api_client.get("/v1/schedules", **bearer(key.raw_key))  # the key's lastUsedAt write happens once a minute
    availability = [
        {"days": [1, 2], "startTime": "09:00", "endTime": "12:00"},
        {"days": [3], "startTime": "13:00", "endTime": "17:00"},
    ]
    with django_assert_num_queries(6):
        response = api_client.post(
            "/v1/schedules",
            {"name": "Work", "timeZone": "UTC", "availability": availability},
            format="json",
            **bearer(key.raw_key),
        )
    assert response.status_code == 200
