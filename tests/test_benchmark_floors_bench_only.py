"""The benchmark floors (benchmarks/, `make bench`) exist only under config.settings_bench."""

import pytest
from django.test import override_settings
from django.urls import Resolver404, resolve

from accounts.tests.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

FLOOR_PATHS = ["/bench/static", "/bench/db/me", "/bench/db/schedules", "/bench/noauth/schedules/1"]


@pytest.mark.parametrize("path", FLOOR_PATHS)
def test_production_urls_do_not_serve_benchmark_floors(api_client, path):
    with pytest.raises(Resolver404):
        resolve(path, urlconf="config.urls")
    api_key = ApiKeyFactory()

    response = api_client.get(path, HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_benchmark_urlconf_adds_floors_to_every_production_url():
    assert resolve("/bench/static", urlconf="benchmarks.urls").func.__name__ == "static"
    for path in ("/v1/me", "/me", "/v1/schedules", "/healthz", "/api/auth/oauth/token"):
        assert resolve(path, urlconf="benchmarks.urls").route == resolve(path, urlconf="config.urls").route


@override_settings(ROOT_URLCONF="benchmarks.urls")
def test_db_floor_of_me_answers_the_callers_row_in_one_query(client, django_assert_num_queries):
    api_key = ApiKeyFactory(user__username="floor-user")

    with django_assert_num_queries(1):
        response = client.get("/bench/db/me", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")

    assert response.status_code == 200
    assert response.json()["user"]["user__username"] == "floor-user"


def test_seed_writes_the_documented_data_set_and_bookable_slots(api_client):
    from accounts.models import Membership
    from benchmarks.seed import seed
    from payments.models import Payment
    from scheduling.models import Availability, Booking, EventType, Schedule
    from webhooks.models import Webhook

    seeded = seed()

    assert Schedule.objects.count() == 50
    assert Availability.objects.count() == 150
    assert EventType.objects.count() == 20
    assert Booking.objects.count() == 2000
    assert Payment.objects.count() == 500
    assert Webhook.objects.count() == 20
    assert Membership.objects.filter(team_id=seeded["team_id"], accepted=True).count() == 50
    assert len(set(seeded["post_slots"])) == len(seeded["post_slots"]) == 5000
    busy_start, busy_end = seeded["busy_window"]
    assert Booking.objects.filter(start_time__date__gte=busy_start, start_time__date__lte=busy_end).count() == 500
    response = api_client.post(
        "/v1/bookings",
        {
            "eventTypeId": seeded["post_event_type_id"],
            "start": seeded["post_slots"][-1],
            "name": "Guest",
            "email": "guest@example.com",
            "timeZone": "Europe/Berlin",
        },
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {seeded['api_key']}",
    )
    assert response.status_code == 200, response.content


@override_settings(ROOT_URLCONF="benchmarks.urls")
def test_every_line_of_make_bench_answers_2xx_before_it_is_measured(client):
    """What `make bench` checks with one request before it loads each line, here, so that a change
    that breaks a floor or a line fails the suite rather than a benchmark run ten minutes in."""
    from pathlib import Path

    from benchmarks.run import floor_target, key_header, targets
    from benchmarks.seed import reset_created_rows, seed

    seeded = seed()
    static, endpoints, extras = targets(seeded)
    lines = [static, *endpoints, *(floor_target(endpoint) for endpoint in endpoints), *extras]
    for target in lines:
        headers = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in key_header(target).items()}
        headers["HTTP_AUTHORIZATION"] = f"Bearer {seeded['api_key']}"
        if target.method == "GET":
            response = client.get(target.path, **headers)
        else:
            body = Path(target.bodies).read_text().splitlines()[0]
            response = client.post(target.path, body, content_type="application/json", **headers)
        assert 200 <= response.status_code < 300, (target.key, response.status_code, response.content[:300])
        if target.creates:
            reset_created_rows(seeded)
    assert {target.key for target in lines} >= {"booking_create_keyed", "schedule_noauth", "slots_busy"}


@override_settings(ROOT_URLCONF="benchmarks.urls")
def test_bookings_floor_reads_the_bookings_the_endpoint_shows(client):
    """F_db of the bookings list runs the endpoint's visibility rule: organised, of an owned event
    type, of a team run, attended; not only the organiser's own."""
    from accounts.models import MembershipRole
    from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
    from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

    caller = UserFactory(email="caller@example.com")
    team = TeamFactory()
    MembershipFactory(user=caller, team=team, role=MembershipRole.ADMIN, accepted=True)
    visible = [
        BookingFactory(organizer=caller),
        BookingFactory(event_type=EventTypeFactory(owner=caller)),
        BookingFactory(event_type=EventTypeFactory(owner=None, team=team, schedule=ScheduleFactory(user=caller))),
        BookingFactory(attendees=[{"email": "caller@example.com"}]),
    ]
    BookingFactory()  # someone else's
    headers = {"HTTP_AUTHORIZATION": f"Bearer {ApiKeyFactory(user=caller).raw_key}"}

    floor = client.get("/bench/db/bookings?take=100", **headers).json()
    endpoint = client.get("/v1/bookings?take=100", **headers).json()

    assert [row["id"] for row in floor["bookings"]] == [row["id"] for row in endpoint["bookings"]]
    assert sorted(row["id"] for row in floor["bookings"]) == sorted(booking.pk for booking in visible)
    assert floor["total"] == endpoint["pagination"]["total"] == 4
