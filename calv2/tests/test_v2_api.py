"""The v2 layer's wire: versions and the shape each gets, unknown fields dropped, the error
envelope, rate-limit headers, and the 13 operations of the released clients, each bad input
answered with a v2 400/404/409 that changes nothing."""

import base64
import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from openapi_spec_validator import validate

from accounts.tests.factories import AccessTokenFactory, UserFactory
from calv2.openapi import document
from calv2.tests.helpers import ALL_VERSIONS, V2Client, booking_at
from calv2.tests.helpers import assert_error as _assert_error
from calv2.tests.helpers import event_type_of as _event_type
from calv2.tests.helpers import free_slot as _free_slot
from scheduling.models import Booking, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db


# --- the document -----------------------------------------------------------------------------


def test_v2_openapi_document_is_valid_and_served(api_client):
    validate(document())
    response = api_client.get("/v2/openapi.json")
    assert response.status_code == 200
    assert response.json()["paths"].keys() == document()["paths"].keys()
    assert "/v2/webhooks/{webhookId}" in document()["paths"]


# --- versions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [*ALL_VERSIONS, "2099-01-01", "latest"])
def test_every_version_header_is_accepted_and_gets_its_booking_list_shape(v2, owner, version):
    BookingFactory(organizer=owner)
    response = v2.call("GET", "/v2/bookings", version=version)
    assert response.status_code == 200
    body = response.json()
    if version in ("2024-08-13", "2026-02-25"):
        assert isinstance(body["data"], list) and body["data"][0]["status"] == "accepted"
        assert body["pagination"]["totalItems"] == 1
    elif version == "2026-05-01":
        assert body["pagination"] == {"nextCursor": None, "hasMore": False}
    else:  # Cal.com's default, 2024-04-15, for none, older and unknown values
        assert body["data"]["bookings"][0]["status"] == "ACCEPTED"
        assert body["data"]["nextCursor"] is None


@pytest.mark.parametrize("version", [*ALL_VERSIONS, "2099-01-01"])
def test_event_types_shape_by_version(v2, owner, version):
    event_type = _event_type(owner, title="Intro", length=45)
    body = v2.call("GET", "/v2/event-types", version=version).json()
    if version in (None, "2024-04-15", "2024-06-11", "2099-01-01"):
        [group] = body["data"]["eventTypeGroups"]
        assert group["eventTypes"][0]["length"] == 45
        assert body["data"]["profiles"] == [{"slug": "grace", "name": "Grace Hopper"}]
    else:
        assert body["data"][0]["id"] == event_type.pk and body["data"][0]["lengthInMinutes"] == 45


def test_version_neutral_operations_answer_the_same_for_every_version(v2):
    answers = {json.dumps(v2.call("GET", "/v2/me", version=version).json()) for version in ALL_VERSIONS}
    assert len(answers) == 1


# --- the error envelope and the edge ----------------------------------------------------------


def test_unknown_path_is_a_v2_404(v2):
    _assert_error(v2.call("GET", "/v2/nowhere"), 404, "NotFoundException")


def test_no_credentials_is_a_v2_401_with_www_authenticate(api_client):
    response = api_client.get("/v2/me")
    body = _assert_error(response, 401, "UnauthorizedException")
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert body["error"]["details"]["code"] == "not_authenticated"


def test_malformed_json_is_a_v2_400_and_creates_nothing(v2):
    _assert_error(v2.call("POST", "/v2/webhooks", raw="{not json"), 400, "BadRequestException")
    assert not Webhook.objects.exists()


def test_a_json_array_body_is_a_v2_400(v2):
    _assert_error(v2.call("POST", "/v2/webhooks", raw="[]"), 400, "BadRequestException")


def test_method_not_allowed_is_a_v2_405(v2):
    _assert_error(v2.call("PUT", "/v2/me", {}), 405, "MethodNotAllowedException")


def test_rate_limit_headers_have_v2_names_too(v2):
    response = v2.call("GET", "/v2/me")
    assert response["X-RateLimit-Limit-Default"] == response["RateLimit-Limit"]
    assert response["X-RateLimit-Remaining-Default"] == response["RateLimit-Remaining"]
    assert response["X-RateLimit-Reset-Default"] == response["RateLimit-Reset"]


def test_exhausted_rate_limit_is_a_v2_429(v2, settings, private_redis):
    settings.RATE_LIMIT_PER_MINUTE = 2
    assert v2.call("GET", "/v2/me").status_code == 200
    assert v2.call("GET", "/v2/me").status_code == 200
    response = v2.call("GET", "/v2/me")
    _assert_error(response, 429, "ThrottlerException")
    assert int(response["Retry-After"]) >= 1
    assert response["X-RateLimit-Remaining-Default"] == "0"


# --- webhooks ---------------------------------------------------------------------------------

HOOK = {"subscriberUrl": "http://127.0.0.1:9/hook", "triggers": ["BOOKING_CREATED"], "active": True}


def test_webhook_create_honours_the_secret_drops_unknown_fields_and_answers_201(v2, owner):
    response = v2.call("POST", "/v2/webhooks", {**HOOK, "secret": "s3cret", "color": "red", "version": "2021-10-20"})
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["secret"] == "s3cret" and data["userId"] == owner.pk and data["triggers"] == ["BOOKING_CREATED"]
    assert Webhook.objects.get().secret == "s3cret"


def test_webhook_create_without_secret_gets_a_generated_one(v2):
    data = v2.call("POST", "/v2/webhooks", HOOK).json()["data"]
    assert data["secret"].startswith("whsec_")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**HOOK, "triggers": ["NOT_A_TRIGGER"]}, "triggers[0]"),
        ({**HOOK, "triggers": []}, "triggers"),
        ({key: value for key, value in HOOK.items() if key != "active"}, "active"),
        ({**HOOK, "active": "true"}, "active"),
        ({**HOOK, "subscriberUrl": "http://169.254.169.254/latest"}, "subscriberUrl"),
        ({**HOOK, "subscriberUrl": "ftp://example.org/x"}, "subscriberUrl"),
        ({**HOOK, "payloadTemplate": '{"a": "{{no.such.variable}}"}'}, "payloadTemplate"),
    ],
)
def test_webhook_create_bad_input_is_a_v2_400_naming_the_field_and_creates_nothing(v2, body, field):
    body_ = _assert_error(v2.call("POST", "/v2/webhooks", body), 400, "BadRequestException")
    assert field in body_["error"]["details"]["errors"], body_
    assert not Webhook.objects.exists()


def test_webhook_list_pages_with_take_and_skip_and_get_update_delete(v2):
    ids = [
        v2.call("POST", "/v2/webhooks", {**HOOK, "subscriberUrl": f"http://127.0.0.1:9/{n}"}).json()["data"]["id"]
        for n in range(3)
    ]
    page = v2.call("GET", "/v2/webhooks?take=2&skip=1").json()["data"]
    assert [hook["id"] for hook in page] == ids[1:]
    assert v2.call("GET", f"/v2/webhooks/{ids[0]}").json()["data"]["id"] == ids[0]
    patched = v2.call("PATCH", f"/v2/webhooks/{ids[0]}", {"active": False, "triggers": ["BOOKING_CANCELLED"], "x": 1})
    assert patched.status_code == 200
    assert patched.json()["data"]["active"] is False and patched.json()["data"]["triggers"] == ["BOOKING_CANCELLED"]
    deleted = v2.call("DELETE", f"/v2/webhooks/{ids[0]}")
    assert deleted.status_code == 200 and deleted.json()["data"]["id"] == ids[0]
    assert Webhook.objects.count() == 2
    _assert_error(v2.call("GET", f"/v2/webhooks/{ids[0]}"), 404, "NotFoundException")


@pytest.mark.parametrize("query", ["take=0", "take=251", "skip=-1", "take=abc"])
def test_webhook_list_bad_paging_is_a_v2_400(v2, query):
    _assert_error(v2.call("GET", f"/v2/webhooks?{query}"), 400, "BadRequestException")


def test_someone_elses_webhook_and_event_type_are_404(v2, api_client):
    other = V2Client(api_client, UserFactory())
    hook = other.call("POST", "/v2/webhooks", HOOK).json()["data"]["id"]
    _assert_error(v2.call("GET", f"/v2/webhooks/{hook}"), 404, "NotFoundException")
    _assert_error(v2.call("DELETE", f"/v2/webhooks/{hook}"), 404, "NotFoundException")
    event_type = EventTypeFactory(owner=other.user)
    _assert_error(v2.call("POST", f"/v2/event-types/{event_type.pk}/webhooks", HOOK), 404, "NotFoundException")
    _assert_error(v2.call("GET", f"/v2/event-types/{event_type.pk}/webhooks"), 404, "NotFoundException")
    assert Webhook.objects.count() == 1


def test_event_type_webhooks_list_get_and_delete(v2, owner):
    event_type = EventTypeFactory(owner=owner)
    created = v2.call("POST", f"/v2/event-types/{event_type.pk}/webhooks", HOOK)
    assert created.status_code == 201 and created.json()["data"]["eventTypeId"] == event_type.pk
    hook = created.json()["data"]["id"]
    assert [h["id"] for h in v2.call("GET", f"/v2/event-types/{event_type.pk}/webhooks").json()["data"]] == [hook]
    assert v2.call("GET", f"/v2/event-types/{event_type.pk}/webhooks/{hook}").status_code == 200
    _assert_error(v2.call("GET", f"/v2/webhooks/{hook}"), 404, "NotFoundException")
    assert v2.call("DELETE", f"/v2/event-types/{event_type.pk}/webhooks/{hook}").status_code == 200
    assert not Webhook.objects.exists()


def test_oauth_token_without_the_webhook_scope_is_a_v2_403(api_client, owner):
    token = AccessTokenFactory(user=owner, scope="READ_PROFILE").raw_token
    response = api_client.post(
        "/v2/webhooks", json.dumps(HOOK), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    _assert_error(response, 403, "ForbiddenException")
    assert response.json()["error"]["details"]["code"] == "insufficient_scope"
    assert not Webhook.objects.exists()


# --- bookings ---------------------------------------------------------------------------------


def _booking_body(event_type, start, **extra):
    return {
        "start": start,
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Ada Lovelace", "email": "ada@example.org", "timeZone": "Europe/London"},
        **extra,
    }


def test_booking_create_get_and_cancel_2024_08_13(v2, owner):
    event_type = _event_type(owner)
    start = _free_slot(v2, event_type)
    body = _booking_body(
        event_type,
        start,
        guests=["bob@example.org"],
        location={"type": "address", "address": "1 Main St"},
        metadata={"source": "n8n"},
        unknownField=True,
    )
    created = v2.call("POST", "/v2/bookings", body, version="2024-08-13")
    assert created.status_code == 201, created.content
    booking = created.json()["data"]
    assert booking["status"] == "accepted" and booking["start"] == start.replace("Z", ".000Z").replace(
        ".000.000Z", ".000Z"
    )
    assert booking["attendees"][0]["name"] == "Ada Lovelace" and booking["guests"] == ["bob@example.org"]
    assert booking["location"] == "1 Main St" and booking["metadata"] == {"source": "n8n"}
    assert booking["hosts"][0]["id"] == owner.pk and booking["duration"] == 30

    got = v2.call("GET", f"/v2/bookings/{booking['uid']}", version="2024-08-13").json()["data"]
    assert got == booking

    cancelled = v2.call(
        "POST", f"/v2/bookings/{booking['uid']}/cancel", {"cancellationReason": "Ill"}, version="2024-08-13"
    )
    assert cancelled.status_code == 200
    assert cancelled.json()["data"]["status"] == "cancelled"
    assert cancelled.json()["data"]["cancellationReason"] == "Ill"
    assert Booking.objects.get().status == BookingStatus.CANCELLED
    again = v2.call("POST", f"/v2/bookings/{booking['uid']}/cancel", {}, version="2024-08-13")
    _assert_error(again, 409, "ConflictException")


def test_booking_the_same_slot_twice_is_a_v2_409_and_books_once(v2, owner):
    event_type = _event_type(owner)
    body = _booking_body(event_type, _free_slot(v2, event_type))
    assert v2.call("POST", "/v2/bookings", body, version="2024-08-13").status_code == 201
    _assert_error(v2.call("POST", "/v2/bookings", body, version="2024-08-13"), 409, "ConflictException")
    assert Booking.objects.count() == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"start": "not a date"}, "start"),
        ({"eventTypeId": "1"}, "eventTypeId"),
        ({"attendee": {"name": "A", "email": "not-an-email", "timeZone": "UTC"}}, "attendee.email"),
        ({"attendee": {"name": "A", "email": "a@example.org", "timeZone": "Mars/Base"}}, "attendee.timeZone"),
        ({"attendee": {"email": "a@example.org", "timeZone": "UTC"}}, "attendee.name"),
        ({"guests": ["x"]}, "guests[0]"),
        ({"metadata": [1, 2]}, "metadata"),
        ({"lengthInMinutes": 15}, "lengthInMinutes"),
        ({"location": 5}, "location"),
    ],
)
def test_booking_create_bad_input_is_a_v2_400_and_books_nothing(v2, owner, change, field):
    event_type = _event_type(owner)
    body = {**_booking_body(event_type, _free_slot(v2, event_type)), **change}
    response = _assert_error(v2.call("POST", "/v2/bookings", body, version="2024-08-13"), 400, "BadRequestException")
    assert field in response["error"]["details"]["errors"], response
    assert not Booking.objects.exists()


def test_booking_of_an_unknown_event_type_or_not_a_slot(v2, owner):
    event_type = _event_type(owner)
    start = _free_slot(v2, event_type)
    missing = {**_booking_body(event_type, start), "eventTypeId": 999999}
    _assert_error(v2.call("POST", "/v2/bookings", missing, version="2024-08-13"), 404, "NotFoundException")
    off_grid = _booking_body(event_type, start.replace(":00:00", ":07:00"))
    _assert_error(v2.call("POST", "/v2/bookings", off_grid, version="2024-08-13"), 409, "ConflictException")
    assert not Booking.objects.exists()


def test_legacy_booking_create_takes_v1_body_and_drops_unknown_fields(v2, owner):
    event_type = _event_type(owner)
    start = _free_slot(v2, event_type)
    body = {
        "start": start,
        "eventTypeId": event_type.pk,
        "timeZone": "Europe/London",
        "language": "en",
        "metadata": {},
        "responses": {"name": "Ada", "email": "ada@example.org"},
        "somethingNew": 1,
    }
    response = v2.call("POST", "/v2/bookings", body)
    assert response.status_code == 201, response.content
    assert response.json()["data"]["status"] == "ACCEPTED"
    stored = response.json()["data"]["startTime"]
    assert datetime.fromisoformat(stored.replace("Z", "+00:00")) == datetime.fromisoformat(start.replace("Z", "+00:00"))


def test_get_unknown_or_foreign_booking_is_a_v2_404(v2, api_client):
    _assert_error(v2.call("GET", "/v2/bookings/nope", version="2024-08-13"), 404, "NotFoundException")
    foreign = BookingFactory(organizer=UserFactory())
    _assert_error(v2.call("GET", f"/v2/bookings/{foreign.uid}"), 404, "NotFoundException")
    _assert_error(v2.call("POST", f"/v2/bookings/{foreign.uid}/cancel", {}), 404, "NotFoundException")
    foreign.refresh_from_db()
    assert foreign.status == BookingStatus.ACCEPTED


def test_booking_list_filters_sort_and_offset_pagination(v2, owner):
    event_type = _event_type(owner)
    now = timezone.now().replace(microsecond=0)
    past = BookingFactory(
        organizer=owner,
        event_type=event_type,
        start_time=now - timedelta(days=2),
        end_time=now - timedelta(days=2) + timedelta(minutes=30),
    )
    upcoming = [booking_at(owner, event_type, now + timedelta(days=day)) for day in (3, 1, 2)]
    cancelled = BookingFactory(
        organizer=owner,
        event_type=event_type,
        status=BookingStatus.CANCELLED,
        attendees=[{"email": "zed@example.org", "name": "Zed"}],
    )
    BookingFactory(organizer=UserFactory())  # someone else's

    def uids(query):
        response = v2.call("GET", f"/v2/bookings?{query}", version="2024-08-13")
        assert response.status_code == 200
        return [booking["uid"] for booking in response.json()["data"]], response.json()["pagination"]

    ids, pagination = uids("status=upcoming")
    assert ids == [b.uid for b in sorted(upcoming, key=lambda b: b.start_time)]
    assert pagination["totalItems"] == 3
    assert uids("status=past")[0] == [past.uid]
    cancelled_or_past = uids("status=cancelled,past&sortStart=desc")[0]
    assert set(cancelled_or_past) == {cancelled.uid, past.uid}
    assert uids("attendeeEmail=zed@example.org")[0] == [cancelled.uid]
    assert uids("attendeeName=zed")[0] == [cancelled.uid]
    ids, pagination = uids("status=upcoming&take=2&skip=2")
    assert len(ids) == 1
    assert pagination == {
        "totalItems": 3,
        "totalItemsIsExact": True,
        "remainingItems": 0,
        "returnedItems": 1,
        "itemsPerPage": 2,
        "currentPage": 2,
        "totalPages": 2,
        "hasNextPage": False,
        "hasPreviousPage": True,
    }


@pytest.mark.parametrize("query", ["status=soon", "take=251", "afterStart=yesterday", "sortStart=up", "eventTypeId=x"])
def test_booking_list_bad_filters_are_v2_400(v2, query):
    _assert_error(v2.call("GET", f"/v2/bookings?{query}", version="2024-08-13"), 400, "BadRequestException")


def test_cursor_mode_pages_through_every_booking_once(v2, owner):
    event_type = _event_type(owner)
    now = timezone.now().replace(microsecond=0)
    made = [
        BookingFactory(
            organizer=owner,
            event_type=event_type,
            start_time=now + timedelta(hours=hour),
            end_time=now + timedelta(hours=hour, minutes=30),
        )
        for hour in range(5)
    ]
    seen, cursor = [], None
    while True:
        query = "limit=2&status=upcoming" + (f"&cursor={cursor}" if cursor else "")
        body = v2.call("GET", f"/v2/bookings?{query}", version="2026-05-01").json()
        seen += [booking["uid"] for booking in body["data"]]
        if not body["pagination"]["hasMore"]:
            assert body["pagination"]["nextCursor"] is None
            break
        cursor = body["pagination"]["nextCursor"]
    assert seen == [booking.uid for booking in made]


@pytest.mark.parametrize("query", ["cursor=garbage!", "status=upcoming,past", "limit=0", "limit=251"])
def test_cursor_mode_bad_input_is_a_v2_400(v2, query):
    _assert_error(v2.call("GET", f"/v2/bookings?{query}", version="2026-05-01"), 400, "BadRequestException")


@pytest.mark.parametrize(
    "written",
    [
        b'["2026-01-01T00:00:00+00:00", 100000000000000000000000000000]',  # past a bigint
        b'["2026-01-01T00:00:00", 5]',  # no offset: which instant?
        b'["2026-01-01T00:00:00+00:00", -5]',
        b'["2026-01-01T00:00:00+00:00", 5.7]',
        b'["2026-01-01T00:00:00+00:00", true]',
        b'["2026-01-01T00:00:00+00:00", 1e400]',
        b'["2026-01-01T00:00:00+00:00", 5, 6]',
        b'["2026-01-01T00:00:00\\u0000", 5]',
        b'{"a": 1}',
    ],
)
def test_a_cursor_this_api_did_not_write_is_a_v2_400(v2, written):
    """A cursor is opaque: one that decodes but is not what a page's `nextCursor` holds (a start
    with its offset, a positive integer id) is refused like one that does not decode."""
    cursor = base64.urlsafe_b64encode(written).decode().rstrip("=")
    response = v2.call("GET", f"/v2/bookings?limit=2&status=upcoming&cursor={cursor}", version="2026-05-01")
    _assert_error(response, 400, "BadRequestException")


def test_booking_list_query_count_does_not_grow_with_the_page(v2, owner):
    event_type = _event_type(owner)
    BookingFactory(organizer=owner, event_type=event_type)

    def count():
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as context:
            assert v2.call("GET", "/v2/bookings", version="2024-08-13").status_code == 200
        return len(context)

    count()  # the API key's once-a-minute `lastUsedAt` write
    one = count()
    for _ in range(49):
        BookingFactory(organizer=owner, event_type=event_type)
    assert count() == one


# --- slots ------------------------------------------------------------------------------------


def test_slots_in_a_time_zone_and_as_ranges(v2, owner):
    event_type = _event_type(owner, length=30)
    day = (timezone.now() + timedelta(days=10)).date()
    query = (
        f"eventTypeId={event_type.pk}&start={day}&end={day + timedelta(days=6)}&timeZone=America/New_York&format=range"
    )
    data = v2.call("GET", f"/v2/slots?{query}", version="2024-09-04").json()["data"]
    first_day, slots = next(iter(data.items()))
    assert slots[0]["start"].startswith(first_day) and slots[0]["start"][-6:] in ("-05:00", "-04:00")
    assert slots[0]["start"][19:23] == ".000"
    assert slots[0]["end"] > slots[0]["start"]


@pytest.mark.parametrize(
    "query",
    [
        "start=2030-01-01&end=2030-01-02",
        "eventTypeId={id}&start=2030-01-02&end=2030-01-01",
        "eventTypeId={id}&start=x&end=2030-01-01",
        "eventTypeId={id}&start=2030-01-01&end=2030-01-02&timeZone=Nowhere/Land",
        "eventTypeId={id}&start=2030-01-01&end=2030-01-02&duration=15",
        "eventTypeId={id}&start=2030-01-01&end=2032-01-02",
    ],
)
def test_slots_bad_input_is_a_v2_400(v2, owner, query):
    event_type = _event_type(owner)
    _assert_error(v2.call("GET", "/v2/slots?" + query.format(id=event_type.pk)), 400, "BadRequestException")


def test_slots_of_an_unknown_event_type_is_a_v2_404(v2):
    _assert_error(
        v2.call("GET", "/v2/slots?eventTypeId=999999&start=2030-01-01&end=2030-01-02"), 404, "NotFoundException"
    )


# --- the rest that third-party clients call ---------------------------------------------------


def test_reschedule_makes_a_new_booking_and_cancels_the_old(v2, owner):
    event_type = _event_type(owner)
    first = _free_slot(v2, event_type)
    booking = v2.call("POST", "/v2/bookings", _booking_body(event_type, first), version="2024-08-13").json()["data"]
    later = _free_slot(v2, event_type, days=14)
    moved = v2.call(
        "POST",
        f"/v2/bookings/{booking['uid']}/reschedule",
        {"start": later, "reschedulingReason": "Clash", "x": 1},
        version="2024-08-13",
    )
    assert moved.status_code == 201, moved.content
    new = moved.json()["data"]
    assert new["uid"] != booking["uid"] and new["rescheduledFromUid"] == booking["uid"]
    assert new["reschedulingReason"] == "Clash"
    old = v2.call("GET", f"/v2/bookings/{booking['uid']}", version="2024-08-13").json()["data"]
    assert old["status"] == "cancelled" and old["rescheduledToUid"] == new["uid"]
    bad = v2.call("POST", f"/v2/bookings/{new['uid']}/reschedule", {"start": "soon"}, version="2024-08-13")
    _assert_error(bad, 400, "BadRequestException")
    assert Booking.objects.count() == 2


def test_confirm_and_decline_pending_bookings(v2, owner):
    event_type = _event_type(owner, requires_confirmation=True)
    one = v2.call("POST", "/v2/bookings", _booking_body(event_type, _free_slot(v2, event_type)), version="2024-08-13")
    assert one.json()["data"]["status"] == "pending"
    uid = one.json()["data"]["uid"]
    confirmed = v2.call("POST", f"/v2/bookings/{uid}/confirm", version="2024-08-13")
    assert confirmed.status_code == 200 and confirmed.json()["data"]["status"] == "accepted"
    _assert_error(v2.call("POST", f"/v2/bookings/{uid}/confirm"), 409, "ConflictException")
    two = v2.call(
        "POST", "/v2/bookings", _booking_body(event_type, _free_slot(v2, event_type, days=14)), version="2024-08-13"
    ).json()["data"]
    declined = v2.call("POST", f"/v2/bookings/{two['uid']}/decline", {"reason": "Busy"}, version="2024-08-13")
    assert declined.status_code == 200 and declined.json()["data"]["status"] == "rejected"
    _assert_error(v2.call("POST", f"/v2/bookings/{two['uid']}/decline", {"reason": ["x"]}), 400, "BadRequestException")


def test_patch_me_changes_known_fields_and_drops_unknown_ones(v2, owner):
    schedule = ScheduleFactory(user=owner)
    body = {
        "name": "G. Hopper",
        "timeZone": "Asia/Tokyo",
        "weekStart": "Monday",
        "timeFormat": 24,
        "defaultScheduleId": schedule.pk,
        "avatarUrl": "https://example.org/a.png",
        "brandNew": True,
    }
    response = v2.call("PATCH", "/v2/me", body)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["name"], data["timeZone"], data["weekStart"], data["timeFormat"]) == (
        "G. Hopper",
        "Asia/Tokyo",
        "Monday",
        24,
    )
    assert data["defaultScheduleId"] == schedule.pk and data["avatarUrl"] == "https://example.org/a.png"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"timeZone": "Nowhere/Land"}, "timeZone"),
        ({"timeFormat": 13}, "timeFormat"),
        ({"timeFormat": True}, "timeFormat"),
        ({"timeFormat": 12.5}, "timeFormat"),
        ({"weekStart": "Funday"}, "weekStart"),
        ({"defaultScheduleId": 999999}, "defaultScheduleId"),
        ({"email": "nope"}, "email"),
    ],
)
def test_patch_me_bad_input_is_a_v2_400_and_changes_nothing(v2, owner, body, field):
    before = (owner.time_zone, owner.name, owner.email, owner.default_schedule_id)
    response = _assert_error(v2.call("PATCH", "/v2/me", body), 400, "BadRequestException")
    assert field in response["error"]["details"]["errors"]
    owner.refresh_from_db()
    assert (owner.time_zone, owner.name, owner.email, owner.default_schedule_id) == before


def test_teams_and_timezones(v2, owner):
    from accounts.tests.factories import MembershipFactory

    membership = MembershipFactory(user=owner, accepted=True)
    MembershipFactory(accepted=True)  # a team the caller is not in
    teams = v2.call("GET", "/v2/teams").json()["data"]
    assert [team["id"] for team in teams] == [membership.team_id]
    zones = v2.call("GET", "/v2/timezones").json()["data"]
    assert {"city": "Berlin", "timezone": "Europe/Berlin", "pop": 0} in zones


# --- event types ------------------------------------------------------------------------------


def test_event_type_create_get_update_delete(v2, owner):
    body = {"lengthInMinutes": 45, "title": "Consult", "slug": "consult", "locations": [{"type": "address"}], "x": 1}
    created = v2.call("POST", "/v2/event-types", body, version="2024-06-14")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert (data["lengthInMinutes"], data["slug"], data["ownerId"]) == (45, "consult", owner.pk)
    path = f"/v2/event-types/{data['id']}"
    assert v2.call("GET", path, version="2024-06-14").json()["data"] == data
    patched = v2.call("PATCH", path, {"lengthInMinutes": 60, "hidden": True}, version="2024-06-14")
    assert patched.status_code == 200
    assert patched.json()["data"]["lengthInMinutes"] == 60 and patched.json()["data"]["hidden"] is True
    deleted = v2.call("DELETE", path, version="2024-06-14")
    assert deleted.json()["data"] == {"id": data["id"], "lengthInMinutes": 60, "title": "Consult", "slug": "consult"}
    _assert_error(v2.call("GET", path), 404, "NotFoundException")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": "A", "slug": "a"}, "lengthInMinutes"),
        ({"lengthInMinutes": 0, "title": "A", "slug": "a"}, "lengthInMinutes"),
        ({"lengthInMinutes": 30, "title": "A", "slug": "not a slug"}, "slug"),
        ({"lengthInMinutes": 30, "title": "A", "slug": "a", "hidden": "yes"}, "hidden"),
    ],
)
def test_event_type_create_bad_input_is_a_v2_400_and_creates_nothing(v2, owner, body, field):
    response = _assert_error(v2.call("POST", "/v2/event-types", body), 400, "BadRequestException")
    assert field in response["error"]["details"]["errors"]
    assert not owner.event_types.exists()


def test_event_type_duplicate_slug_is_refused_and_foreign_event_type_is_404(v2, owner):
    EventTypeFactory(owner=owner, slug="taken")
    response = v2.call("POST", "/v2/event-types", {"lengthInMinutes": 30, "title": "T", "slug": "taken"})
    assert response.status_code in (400, 409) and response.json()["status"] == "error"
    foreign = EventTypeFactory()
    _assert_error(v2.call("PATCH", f"/v2/event-types/{foreign.pk}", {"title": "Mine"}), 404, "NotFoundException")
    _assert_error(v2.call("DELETE", f"/v2/event-types/{foreign.pk}"), 404, "NotFoundException")
    foreign.refresh_from_db()
    assert foreign.title != "Mine"


# --- schedules --------------------------------------------------------------------------------

SCHEDULE = {
    "name": "Office",
    "timeZone": "Europe/Rome",
    "isDefault": True,
    "availability": [{"days": ["Monday", "Tuesday"], "startTime": "09:00", "endTime": "12:00"}],
    "overrides": [{"date": "2030-01-07", "startTime": "10:00", "endTime": "11:00"}],
}


def test_schedule_create_list_default_get_update_delete(v2, owner):
    created = v2.call("POST", "/v2/schedules", {**SCHEDULE, "unknown": 1}, version="2024-06-11")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert data["availability"] == SCHEDULE["availability"] and data["overrides"] == SCHEDULE["overrides"]
    assert data["isDefault"] is True and data["ownerId"] == owner.pk
    assert [s["id"] for s in v2.call("GET", "/v2/schedules").json()["data"]] == [data["id"]]
    assert v2.call("GET", "/v2/schedules/default").json()["data"]["id"] == data["id"]
    path = f"/v2/schedules/{data['id']}"
    assert v2.call("GET", path).json()["data"] == data
    weekly = [{"days": ["Friday"], "startTime": "13:00", "endTime": "17:30"}]
    patched = v2.call("PATCH", path, {"availability": weekly, "name": "Afternoons"}).json()["data"]
    assert patched["availability"] == weekly and patched["overrides"] == SCHEDULE["overrides"]
    assert patched["name"] == "Afternoons"
    assert v2.call("DELETE", path).json() == {"status": "success"}
    assert v2.call("GET", "/v2/schedules/default").json()["data"] is None
    _assert_error(v2.call("GET", path), 404, "NotFoundException")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"isDefault": None}, "isDefault"),
        ({"timeZone": "Mars/Base"}, "timeZone"),
        (
            {"availability": [{"days": ["Someday"], "startTime": "09:00", "endTime": "10:00"}]},
            "availability[0].days[0]",
        ),
        ({"availability": [{"days": ["Monday"], "startTime": "9am", "endTime": "10:00"}]}, "availability[0].startTime"),
        ({"overrides": [{"date": "07/01/2030", "startTime": "09:00", "endTime": "10:00"}]}, "overrides[0].date"),
    ],
)
def test_schedule_create_bad_input_is_a_v2_400_and_creates_nothing(v2, owner, change, field):
    response = _assert_error(v2.call("POST", "/v2/schedules", {**SCHEDULE, **change}), 400, "BadRequestException")
    assert field in response["error"]["details"]["errors"], response
    assert not owner.schedules.exists()


def test_schedule_with_end_before_start_is_refused_and_foreign_schedule_is_404(v2, owner):
    bad = {**SCHEDULE, "availability": [{"days": ["Monday"], "startTime": "12:00", "endTime": "09:00"}]}
    _assert_error(v2.call("POST", "/v2/schedules", bad), 400, "BadRequestException")
    assert not owner.schedules.exists()
    foreign = ScheduleFactory()
    _assert_error(v2.call("GET", f"/v2/schedules/{foreign.pk}"), 404, "NotFoundException")
    _assert_error(v2.call("DELETE", f"/v2/schedules/{foreign.pk}"), 404, "NotFoundException")


def test_v1_document_does_not_describe_v2(api_client):
    paths = api_client.get("/v1/openapi.json").json()["paths"]
    assert paths and not [path for path in paths if path.startswith("/v2/")]


def test_event_slug_without_username_is_a_v2_400(v2):
    error = _assert_error(
        v2.call("GET", "/v2/event-types?eventSlug=intro", version="2024-06-14"), 400, "BadRequestException"
    )
    assert "eventSlug" in error["error"]["details"]["errors"]


def test_slots_for_the_reschedule_of_an_unknown_booking_is_a_v2_404(v2, owner):
    event_type = _event_type(owner)
    day = (timezone.now() + timedelta(days=7)).date()
    query = f"eventTypeId={event_type.pk}&start={day}&end={day}&bookingUidToReschedule=nope"
    _assert_error(v2.call("GET", f"/v2/slots?{query}", version="2024-09-04"), 404, "NotFoundException")
