"""A user's bookings as a calendar feed (calendars.feeds): what the full and the busy feed show,
parsed with `icalendar`; the secret address made, rotated and revoked; 404s that say nothing;
ETags; and a tenant with many bookings reads only its window."""

import json
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import icalendar
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calendars.models import CalendarFeed
from calendars.tests.factories import BookingReferenceFactory
from scheduling.models import Booking, BookingHost, BookingStatus
from scheduling.tests.factories import AttendeeFactory, BookingFactory
from tests.support.credentials import auth, bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def host():
    return UserFactory(time_zone="Europe/Berlin", name="Ada Lovelace")


@pytest.fixture
def key(host):
    return ApiKeyFactory(user=host).raw_key


def issue(api_client, key, variant="full") -> str:
    """The feed's path (the answer's URL without its origin)."""
    response = api_client.post(f"/v1/calendar-feeds/{variant}", format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    url = response.json()["calendar_feed"]["url"]
    assert url.startswith("http://testserver/v1/calendar-feeds/")
    return url.removeprefix("http://testserver")


def read(api_client, path, **headers):
    return api_client.get(path, **headers)


def events_of(response) -> dict[str, icalendar.Event]:
    assert response.status_code == 200
    assert response["Content-Type"] == "text/calendar; charset=utf-8"
    calendar = icalendar.Calendar.from_ical(response.content)
    return {str(event["UID"]): event for event in calendar.walk("VEVENT")}


def at(days: int, hour: int = 10) -> datetime:
    day = timezone.now().astimezone(BERLIN).date() + timedelta(days=days)
    return datetime.combine(day, time(hour), tzinfo=BERLIN)


def booking(organizer, start, **fields) -> Booking:
    return BookingFactory(organizer=organizer, start_time=start, end_time=start + timedelta(minutes=30), **fields)


def test_the_full_feed_shows_the_window_with_the_calendar_events_identity(api_client, key, host):
    upcoming = booking(
        host,
        at(3),
        title="Design review",
        description="Bring the drafts",
        location="Room 4",
        attendees=[{"name": "Grace Hopper", "email": "grace@example.org"}],
    )
    pending = booking(host, at(4), status=BookingStatus.PENDING)
    recent = booking(host, at(-10))
    cancelled = booking(host, at(5), status=BookingStatus.CANCELLED)
    long_cancelled = booking(host, at(6), status=BookingStatus.CANCELLED)
    Booking.objects.filter(pk=long_cancelled.pk).update(updated_at=timezone.now() - timedelta(days=31))
    moved_away = booking(host, at(7), status=BookingStatus.CANCELLED, rescheduled=True)
    successor = booking(host, at(8), ical_uid=f"{moved_away.uid}@Cal.com", ical_sequence=1)
    BookingReferenceFactory(booking=successor, uid=f"{moved_away.uid}@Cal.com", sequence=3)
    too_old, too_far = booking(host, at(-91)), booking(host, at(366))
    someone_elses = booking(UserFactory(), at(3, 12))
    hosted = booking(UserFactory(), at(9))
    BookingHost.objects.create(booking=hosted, user=host)

    events = events_of(read(api_client, issue(api_client, key)))

    uid = f"{upcoming.uid}@Cal.com"
    assert set(events) == {
        uid,
        f"{pending.uid}@Cal.com",
        f"{recent.uid}@Cal.com",
        f"{cancelled.uid}@Cal.com",
        f"{moved_away.uid}@Cal.com",  # the successor, under the meeting's UID
        f"{hosted.uid}@Cal.com",
    }
    event = events[uid]
    assert (str(event["SUMMARY"]), str(event["DESCRIPTION"]), str(event["LOCATION"])) == (
        "Design review",
        "Bring the drafts",
        "Room 4",
    )
    assert (event["DTSTART"].dt, event["DTEND"].dt) == (upcoming.start_time, upcoming.end_time)
    assert (str(event["STATUS"]), str(event["TRANSP"]), int(event["SEQUENCE"])) == ("CONFIRMED", "OPAQUE", 0)
    assert str(event["ORGANIZER"]) == f"mailto:{host.email}"
    attendees = event["ATTENDEE"] if isinstance(event["ATTENDEE"], list) else [event["ATTENDEE"]]
    assert "mailto:grace@example.org" in [str(attendee) for attendee in attendees]
    assert str(events[f"{pending.uid}@Cal.com"]["STATUS"]) == "TENTATIVE"
    assert str(events[f"{cancelled.uid}@Cal.com"]["STATUS"]) == "CANCELLED"
    moved = events[f"{moved_away.uid}@Cal.com"]
    assert (moved["DTSTART"].dt, int(moved["SEQUENCE"])) == (successor.start_time, 3)  # as last written
    shown = " ".join(events)
    for left_out in (long_cancelled, too_old, too_far, someone_elses):
        assert left_out.uid not in shown


def test_times_are_utc_and_right_on_both_sides_of_a_dst_change(api_client, key, host):
    # The next days at 09:00 in Berlin whose offsets differ (winter +01:00, summer +02:00).
    by_offset = {}
    for days in range(1, 365):
        start = at(days, 9)
        by_offset.setdefault(start.utcoffset(), start)
    assert len(by_offset) == 2
    made = [booking(host, start) for start in by_offset.values()]

    response = read(api_client, issue(api_client, key))
    events = events_of(response)

    for each in made:
        event = events[f"{each.uid}@Cal.com"]
        start = event["DTSTART"].dt
        assert start.utcoffset() == timedelta(0)
        assert start == each.start_time
        assert start.astimezone(BERLIN).time() == time(9)
    assert b"TZID" not in response.content  # UTC, which needs no zone definitions


def test_the_busy_feed_shows_times_only(api_client, key, host):
    secret = booking(
        host,
        at(3),
        title="Acquisition talks",
        description="Codename Falcon",
        location="Board room",
        attendees=[{"name": "Grace Hopper", "email": "grace@example.org"}],
    )
    cancelled = booking(host, at(4), status=BookingStatus.CANCELLED, title="Cancelled secret")

    response = read(api_client, issue(api_client, key, "busy"))

    [event] = events_of(response).values()
    assert set(event) == {"UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY", "TRANSP", "CLASS"}
    assert (str(event["SUMMARY"]), str(event["TRANSP"])) == ("Busy", "OPAQUE")
    assert (event["DTSTART"].dt, event["DTEND"].dt) == (secret.start_time, secret.end_time)
    body = response.content.decode()
    for leak in (
        secret.uid,
        cancelled.uid,
        "Acquisition",
        "Falcon",
        "Board room",
        "grace@example.org",
        "Grace",
        host.email,
        "Ada",
        "Cancelled secret",
    ):
        assert leak not in body
    # The same event keeps its UID from one read to the next; an edit it does not show changes
    # neither its body nor its headers.
    secret.title = "Acquisition talks, day two"
    secret.save()
    again = read(api_client, response.wsgi_request.path)
    assert (again.content, again["ETag"], again["Last-Modified"]) == (
        response.content,
        response["ETag"],
        response["Last-Modified"],
    )


def test_making_rotating_and_revoking_the_address(api_client, key, host):
    assert api_client.get("/v1/calendar-feeds/full", **bearer(key)).status_code == 404
    first = issue(api_client, key)
    shown = api_client.get("/v1/calendar-feeds/full", **bearer(key)).json()["calendar_feed"]
    assert shown["url"] is None and shown["variant"] == "full" and shown["createdAt"]
    token = first.rsplit("/", 1)[1].removesuffix(".ics")
    stored = CalendarFeed.objects.get(user=host)
    assert token not in stored.token_hash and len(stored.token_hash) == 64  # only a hash is kept

    response = api_client.post("/v1/calendar-feeds/full", format="json", **bearer(key))
    assert response.json()["message"] == "Calendar feed rotated successfully"
    second = response.json()["calendar_feed"]["url"].removeprefix("http://testserver")
    assert second != first
    assert read(api_client, first).status_code == 404
    assert read(api_client, second).status_code == 200
    # A token is good for its own variant only.
    assert read(api_client, second.replace("/full/", "/busy/")).status_code == 404

    response = api_client.delete("/v1/calendar-feeds/full", **bearer(key))
    assert response.json() == {"message": "Calendar feed full revoked successfully"}
    assert read(api_client, second).status_code == 404
    assert api_client.delete("/v1/calendar-feeds/full", **bearer(key)).status_code == 404
    assert not CalendarFeed.objects.exists()


def test_the_management_needs_a_credential_its_scope_and_knows_two_variants(api_client, key, host):
    assert api_client.post("/v1/calendar-feeds/full", format="json").status_code == 401
    assert api_client.post("/v1/calendar-feeds/secret", format="json", **bearer(key)).status_code == 404
    reader = auth(host, scope="READ_CALENDAR")
    response = api_client.post("/v1/calendar-feeds/full", format="json", **reader)
    assert (response.status_code, response.json()["code"]) == (403, "insufficient_scope")
    assert not CalendarFeed.objects.exists()
    issue(api_client, key)
    assert api_client.get("/v1/calendar-feeds/full", **reader).status_code == 200
    assert api_client.delete("/v1/calendar-feeds/full", **reader).status_code == 403
    assert CalendarFeed.objects.count() == 1


def test_a_wrong_or_revoked_token_is_a_404_like_any_unknown_path_by_the_same_queries(api_client, key, host):
    booking(host, at(3))
    path = issue(api_client, key)
    token = path.rsplit("/", 1)[1].removesuffix(".ics")
    near_miss = path.replace(token, token[:-1] + ("A" if token[-1] != "A" else "B"))
    unknown = api_client.get("/v1/calendar-feeds/full/x/y.ics")  # no such route at all
    captured = {}
    for name, candidate in (("near miss", near_miss), ("random", "/v1/calendar-feeds/full/" + "Z" * 43 + ".ics")):
        with CaptureQueriesContext(connection) as queries:
            response = read(api_client, candidate)
        assert response.status_code == 404
        assert response["Content-Type"] == unknown["Content-Type"] == "application/problem+json"
        body = response.json()
        assert body.keys() == unknown.json().keys() and body["code"] == "not_found"
        captured[name] = [query["sql"].split("WHERE")[0] for query in queries.captured_queries]
    api_client.delete("/v1/calendar-feeds/full", **bearer(key))
    with CaptureQueriesContext(connection) as queries:
        assert read(api_client, path).status_code == 404
    captured["revoked"] = [query["sql"].split("WHERE")[0] for query in queries.captured_queries]
    # One indexed lookup by the token's hash, whatever the token: the time taken says nothing.
    assert captured["near miss"] == captured["random"] == captured["revoked"]
    assert len(captured["revoked"]) == 1


def test_a_deactivated_users_feed_is_gone(api_client, key, host):
    path = issue(api_client, key)
    host.is_active = False
    host.save(update_fields=["is_active"])
    assert read(api_client, path).status_code == 404


def test_etag_round_trip_and_last_modified(api_client, key, host):
    made = booking(host, at(3))
    path = issue(api_client, key)
    first = read(api_client, path)
    etag = first["ETag"]
    assert etag.startswith('"') and first["Last-Modified"]
    assert first["Cache-Control"] == "private, no-cache"

    again = read(api_client, path, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b"" and again["ETag"] == etag

    made.title = "Renamed"
    made.save()
    changed = read(api_client, path, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert "Renamed" in changed.content.decode()
    assert read(api_client, path, HTTP_IF_NONE_MATCH=f'"other", {changed["ETag"]}').status_code == 304


def test_the_feed_costs_the_same_queries_for_one_booking_and_fifty(api_client, key, host, django_assert_num_queries):
    path = issue(api_client, key)
    booking(host, at(1))
    with django_assert_num_queries(4):  # the feed, the ids, the bookings, their attendees
        events_of(read(api_client, path))
    for day in range(2, 51):
        booking(host, at(day), attendees=[{}, {}])
    with django_assert_num_queries(4):
        assert len(events_of(read(api_client, path))) == 50


def seed(organizer_id: int, count: int, first: datetime, every: timedelta) -> None:
    """`count` accepted bookings of one organizer, `every` apart from `first`, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO scheduling_booking (uid, organizer_id, title, description, start_time, end_time, status,
                location, metadata, cancellation_reason, rescheduled, cancelled_by, responses, custom_inputs,
                sms_reminder_number, ical_sequence, ical_uid, recurring_event_id, no_show_host, created_at, updated_at)
            SELECT md5(%s || n::text), %s, 'Seeded', '', %s + n * %s, %s + n * %s + interval '30 minutes',
                'ACCEPTED', '', '{}', '', false, '', '{}', '{}', '', 0, '', '', false, now(), now()
            FROM generate_series(0, %s - 1) AS n
            """,
            [f"seed-{organizer_id}-", organizer_id, first, every, first, every, count],
        )
        cursor.execute("ANALYZE scheduling_booking")


def test_a_big_tenants_feed_reads_only_its_window_up_to_the_limits(api_client, key, host, settings):
    settings.CALENDARS = {**settings.CALENDARS, "FEED_MAX_UPCOMING": 40, "FEED_MAX_PAST": 10}
    # 20,000 bookings two hours apart, from about 800 days ago to about 870 days ahead.
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    seed(host.pk, 20_000, now - timedelta(days=800), timedelta(hours=2))
    seed(UserFactory().pk, 20_000, now - timedelta(days=800, hours=1), timedelta(hours=2))  # another tenant
    path = issue(api_client, key)

    with CaptureQueriesContext(connection) as queries:
        requested_at = timezone.now()
        response = read(api_client, path)
    events = events_of(response)
    assert len(events) == 50
    assert response["X-Feed-Truncated"] == "true"
    starts = sorted(event["DTSTART"].dt for event in events.values())
    assert sum(start < requested_at for start in starts) == 10  # the latest past ones
    assert starts[0] > now - timedelta(days=1)
    assert starts[-1] < now + timedelta(days=5)  # the soonest upcoming ones

    [ids_query] = [query["sql"] for query in queries.captured_queries if "UNION" in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + ids_query)
        plan = cursor.fetchone()[0]
    plan = plan if isinstance(plan, list) else json.loads(plan)
    scans = list(_nodes(plan[0]["Plan"]))
    booking_scans = [node for node in scans if node.get("Relation Name") == "scheduling_booking"]
    assert booking_scans and all(node["Node Type"] == "Index Scan" for node in booking_scans)
    assert "booking_organizer_start" in {node["Index Name"] for node in booking_scans}
    # Each range scan stops at its limit (+1, to know it was reached): never the 40,000 rows.
    examined = [
        (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"]
        for node in scans
        if "Scan" in node["Node Type"]
    ]
    assert max(examined) <= 41


def _nodes(node):
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def test_another_users_feed_never_shows_my_bookings(api_client, host):
    other = UserFactory()
    other_key = ApiKeyFactory(user=other).raw_key
    mine = booking(host, at(3))
    path = issue(api_client, other_key)
    assert mine.uid not in read(api_client, path).content.decode()
    AttendeeFactory(booking=mine, email=other.email)  # an attendee is not a host: still not shown
    assert mine.uid not in read(api_client, path).content.decode()


def test_the_window_reaches_90_days_back_and_a_year_ahead(api_client, key, host):
    inside = [booking(host, at(-89)), booking(host, at(364))]
    outside = [booking(host, at(-91)), booking(host, at(367))]
    body = read(api_client, issue(api_client, key)).content.decode()
    assert all(each.uid in body for each in inside)
    assert not any(each.uid in body for each in outside)
