"""Hostile bodies and query strings: every one is a clear 4xx problem+json, and nothing is written.

The limits are checked once, generically (the default JSON parser, a middleware for query
strings, core.query for integers and booleans), so these tests go through several endpoints,
bookings included.
"""

import json
from datetime import datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from core.limits import JsonBounds, inspect_json, json_text_depth_exceeds, limit
from core.serializers import BoundedJSONField
from payments.tests.factories import PaymentFactory
from scheduling.models import Booking, BookingStatus, Schedule
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import auth
from tests.support.problems import assert_problem
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def headers(organizer):
    return auth(organizer)


def nested(depth: int, leaf=1):
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def monday_ten_berlin() -> str:
    today = timezone.now().astimezone(BERLIN).date()
    monday = today + timedelta(days=(7 - today.weekday()) % 7 + 14)
    return datetime.combine(monday, time(10), tzinfo=BERLIN).isoformat()


def booking_body(event_type, **extra) -> dict:
    return {
        "eventTypeId": event_type.pk,
        "start": monday_ten_berlin(),
        "name": "Ada",
        "email": "ada@example.org",
        "timeZone": "Europe/London",
        **extra,
    }


# --- Nesting depth, checked once when the body is parsed ---------------------------------------


@pytest.mark.parametrize("keyed", [False, True], ids=["", "with an Idempotency-Key"])
@pytest.mark.parametrize("depth", [40, 260, 5_000, 150_000])
def test_a_deeply_nested_booking_metadata_is_a_400_naming_the_limit_and_writes_nothing(
    client, organizer, headers, depth, keyed
):
    """With an `Idempotency-Key`, the body's fingerprint is taken before the parser runs; a body
    too deep for the decoder was a 500 there."""
    event_type = EventTypeFactory(owner=organizer)
    # Built as text: the test's own JSON encoder must not be what recurses.
    metadata = '{"a":' * depth + "1" + "}" * depth
    body = json.dumps(booking_body(event_type, metadata={})).replace('"metadata": {}', f'"metadata": {metadata}')
    key = {"HTTP_IDEMPOTENCY_KEY": f"deep-{depth}"} if keyed else {}

    response = client.post("/v1/bookings", body, content_type="application/json", **key, **headers)

    detail = assert_problem(response, 400, "malformed_request")["detail"]
    assert "deeper than 32 levels" in detail and "JSON_MAX_DEPTH" in detail
    assert not Booking.objects.exists()
    assert not WebhookDelivery.objects.exists()
    # The organizer's list still answers.
    assert client.get("/v1/bookings", **headers).status_code == 200


def test_the_depth_limit_applies_to_every_endpoint(client, headers):
    body = json.dumps({"name": "x", "timeZone": "UTC", "availability": [nested(40)]})

    response = client.post("/v1/schedules", body, content_type="application/json", **headers)

    assert_problem(response, 400, "malformed_request")
    assert not Schedule.objects.exists()


def test_a_body_at_the_depth_limit_is_parsed_and_metadata_at_its_own_limit_is_stored_and_renders(
    client, organizer, headers
):
    event_type = EventTypeFactory(owner=organizer)
    # The body object is level 1, so metadata nesting 31 levels puts the body at the parser's limit:
    # it is parsed, and then refused by the metadata field's own, smaller bound.
    at_parser_limit = booking_body(event_type, metadata=nested(31))
    refused = client.post("/v1/bookings", json.dumps(at_parser_limit), content_type="application/json", **headers)
    assert list(assert_problem(refused, 400, "validation_error")["errors"]) == ["metadata"]

    depth = limit("JSON_FIELD_MAX_DEPTH")
    body = booking_body(event_type, metadata=nested(depth))
    created = client.post("/v1/bookings", json.dumps(body), content_type="application/json", **headers)

    assert created.status_code == 200, created.content
    listed = client.get("/v1/bookings", **headers)
    assert listed.status_code == 200
    assert listed.json()["bookings"][0]["metadata"] == nested(depth)


def test_the_depth_limit_is_a_setting(client, headers, settings):
    settings.API_LIMITS = {**settings.API_LIMITS, "JSON_MAX_DEPTH": 2}
    body = json.dumps({"name": "x", "timeZone": "UTC", "availability": [{"days": [1]}]})

    response = client.post("/v1/schedules", body, content_type="application/json", **headers)

    assert "deeper than 2 levels" in assert_problem(response, 400, "malformed_request")["detail"]
    assert not Schedule.objects.exists()


# --- NUL, in bodies and in query strings -------------------------------------------------------


@pytest.mark.parametrize(
    "metadata,where",
    [
        ({"note": "a\x00b"}, "(at metadata.note)"),
        ({"a\x00": 1}, "Keys: Must not contain NUL"),
        ({"list": ["ok", "\x00"]}, "(at metadata.list[1])"),
    ],
)
def test_nul_anywhere_in_a_body_is_a_400_naming_the_field(client, organizer, headers, metadata, where):
    event_type = EventTypeFactory(owner=organizer)
    body = json.dumps(booking_body(event_type, metadata=metadata))

    response = client.post("/v1/bookings", body, content_type="application/json", **headers)

    errors = assert_problem(response, 400, "validation_error")["errors"]
    assert "NUL" in errors["metadata"][0] and where in errors["metadata"][0]
    assert not Booking.objects.exists()


def test_nul_in_a_cancellation_reason_query_parameter_is_a_400_and_cancels_nothing(client, organizer, headers):
    booking = BookingFactory(organizer=organizer)

    response = client.delete(f"/v1/bookings/{booking.pk}/cancel?cancellationReason=a%00b", **headers)

    assert assert_problem(response, 400, "validation_error")["errors"] == {
        "cancellationReason": ["Must not contain NUL characters."]
    }
    booking.refresh_from_db()
    assert booking.status == BookingStatus.ACCEPTED
    assert not WebhookDelivery.objects.exists()


@pytest.mark.parametrize("query", ["take=1%00", "x%00=1", "status=ACCEPTED&status=%00"])
def test_nul_in_any_query_string_is_a_400_on_every_path(client, headers, query):
    for path in ("/v1/schedules", "/v1/bookings", "/v1/me", "/v1/no-such-path"):
        response = client.get(f"{path}?{query}", **headers)
        assert "NUL" in assert_problem(response, 400, "validation_error")["detail"]


def test_invalid_json_is_malformed(client, headers):
    for text in ('{"name": ', '{"name": NaN}', '{"name": Infinity}', b'{"name": "\xff"}'):
        response = client.post("/v1/schedules", text, content_type="application/json", **headers)
        assert_problem(response, 400, "malformed_request")
    assert not Schedule.objects.exists()


@pytest.mark.parametrize(
    "text,field",
    [
        ('{"name": "\\ud800", "timeZone": "UTC"}', "name"),
        ('{"name": "x", "timeZone": "UTC", "availability": [{"\\udfff": 1}]}', "availability"),
        ('{"name": "x", "timeZone": "UTC", "userId": 18446744073709551616}', "userId"),
        ('{"name": "x", "timeZone": "UTC", "userId": -9223372036854775809}', "userId"),
    ],
)
def test_values_postgresql_or_the_renderer_cannot_hold_are_refused_at_parse_time(client, headers, text, field):
    response = client.post("/v1/schedules", text, content_type="application/json", **headers)

    assert list(assert_problem(response, 400, "validation_error")["errors"]) == [field]
    assert not Schedule.objects.exists()


def test_a_big_integer_in_booking_metadata_is_refused_not_turned_into_a_float(client, organizer, headers):
    event_type = EventTypeFactory(owner=organizer)
    body = json.dumps(booking_body(event_type, metadata={"n": 2**64}))

    response = client.post("/v1/bookings", body, content_type="application/json", **headers)

    assert "64 bits" in assert_problem(response, 400, "validation_error")["errors"]["metadata"][0]
    assert not Booking.objects.exists()


def _with_metadata_number(event_type, number_text: str) -> str:
    # Written by hand: Python's json module cannot write 1e400, and would write 1e20 as 1e+20.
    body = json.dumps(booking_body(event_type, metadata={"n": "NUMBER"}))
    return body.replace('"NUMBER"', number_text)


@pytest.mark.parametrize(
    "number",
    ["1e20", "-1e19", "18446744073709551616.0", "-9223372036854775808.0", "1e400", "-1e400", "1E+300"],
)
def test_a_number_postgresql_would_store_as_a_too_big_integer_is_refused(client, organizer, headers, number):
    """jsonb keeps numbers as exact decimals and writes one without a fraction as an integer, so
    `1e20` would come back as 100000000000000000000, which the renderer cannot write: the answer
    to the POST and every later GET of the booking would be a 500. `1e400` is read as infinity."""
    event_type = EventTypeFactory(owner=organizer)

    response = client.post(
        "/v1/bookings", _with_metadata_number(event_type, number), content_type="application/json", **headers
    )

    errors = assert_problem(response, 400, "validation_error")["errors"]
    assert errors == {
        "metadata": ["Numbers must lie between -9223372036854775808 and 18446744073709551615. (at metadata.n)"]
    }
    assert not Booking.objects.exists()
    assert not WebhookDelivery.objects.exists()


def test_a_too_big_integer_already_stored_is_shown_exactly_not_a_500(client, organizer, headers):
    """A row stored before the parser's rule (or by other means) may hold such a number: the pages
    that show it answer 200 with the integer as PostgreSQL holds it, in the usual format."""
    start = datetime(2027, 3, 1, 9, 0, tzinfo=ZoneInfo("UTC"))
    booking = BookingFactory(
        organizer=organizer, start_time=start, end_time=start + timedelta(minutes=30), metadata={"n": 1e20}
    )
    BookingFactory(organizer=organizer)  # an ordinary booking on the same page

    shown = client.get(f"/v1/bookings/{booking.pk}", **headers)
    listed = client.get("/v1/bookings", **headers)

    assert shown.status_code == 200
    assert b'"metadata":{"n":100000000000000000000}' in shown.content
    assert shown.json()["booking"]["startTime"] == "2027-03-01T09:00:00Z"
    assert listed.status_code == 200
    assert b'"metadata":{"n":100000000000000000000}' in listed.content
    assert len(listed.json()["bookings"]) == 2


@pytest.mark.parametrize(
    "number,stored",
    [
        ("1.5e19", 15000000000000000000),
        ("18446744073709549568.0", 18446744073709550000),  # the largest float below 2**64
        ("-9223372036854774784.0", -9223372036854775000),  # the float just above -2**63
        ("1e-300", 1e-300),
        ("2.5", 2.5),
    ],
)
def test_numbers_within_the_range_are_stored_and_shown_again(client, organizer, headers, number, stored):
    """The create answers with the number as sent (the booking as written); GET shows it as
    PostgreSQL keeps it, an exact decimal: the same value, 1.844674407370955e19 written out as
    18446744073709550000."""
    event_type = EventTypeFactory(owner=organizer)

    created = client.post(
        "/v1/bookings", _with_metadata_number(event_type, number), content_type="application/json", **headers
    )
    assert created.status_code == 200, created.content
    shown = client.get(f"/v1/bookings/{created.json()['id']}", **headers)

    assert shown.status_code == 200, shown.content
    assert shown.json()["booking"]["metadata"] == {"n": stored}
    assert created.json()["metadata"] == {"n": json.loads(number)}
    assert Decimal(repr(created.json()["metadata"]["n"])) == Decimal(stored if type(stored) is int else repr(stored))


# --- Pagination and query integers -------------------------------------------------------------


@pytest.mark.parametrize(
    "query,name",
    [
        ("page=18446744073709551616", "page"),
        ("page=10001", "page"),
        ("page=0", "page"),
        ("take=501", "take"),
        ("take=0", "take"),
        ("take=%205", "take"),
        ("take=%2B5", "take"),
        ("take=5.0", "take"),
        ("take=-1", "take"),
        ("take=%D9%A5", "take"),  # '٥', an Arabic-Indic five
        ("take=abc&take=5", "take"),
        ("take=5&take=5", "take"),
        ("take=", "take"),
        ("userId=%D9%A5", "userId"),
        ("userId=", "userId"),
    ],
)
def test_list_query_integers_are_ascii_digits_given_once_and_in_range(client, organizer, headers, query, name):
    BookingFactory(organizer=organizer)

    for path in ("/v1/schedules", "/v1/bookings", "/v1/payments"):
        response = client.get(f"{path}?{query}", **headers)
        assert list(assert_problem(response, 400, "validation_error")["errors"]) == [name], path


def test_page_and_take_at_their_limits_answer(client, headers):
    response = client.get("/v1/schedules?take=500&page=10000", **headers)

    assert response.status_code == 200
    assert response.json()["pagination"] == {
        "page": 10000,
        "take": 500,
        "total": 0,
        "totalIsExact": True,
        "hasNextPage": False,
        "nextCursor": None,
    }


@pytest.mark.parametrize(
    "query,name",
    [
        ("success=1", "success"),
        ("success=True", "success"),
        ("refunded=yes", "refunded"),
        ("success=true&success=false", "success"),
        ("bookingId=%D9%A5", "bookingId"),
        ("bookingId=0", "bookingId"),
        ("bookingId=", "bookingId"),
    ],
)
def test_payment_filters_are_strict(client, organizer, headers, query, name):
    PaymentFactory(booking=BookingFactory(organizer=organizer), success=True)

    response = client.get(f"/v1/payments?{query}", **headers)

    assert list(assert_problem(response, 400, "validation_error")["errors"]) == [name]


def test_payment_boolean_filters_take_true_and_false(client, organizer, headers):
    PaymentFactory(booking=BookingFactory(organizer=organizer), success=True)

    assert client.get("/v1/payments?success=true", **headers).json()["pagination"]["total"] == 1
    assert client.get("/v1/payments?success=false", **headers).json()["pagination"]["total"] == 0


# --- Booleans and integers in JSON bodies -------------------------------------------------------


@pytest.mark.parametrize("value", [1, 0, "true", "false", "yes", None])
def test_booleans_in_bodies_are_json_booleans(client, headers, value):
    body = json.dumps({"name": "x", "timeZone": "UTC", "isDefault": value})

    response = client.post("/v1/schedules", body, content_type="application/json", **headers)

    if value is None:  # isDefault is nullable: "no preference"
        assert response.status_code == 200
        return
    assert list(assert_problem(response, 400, "validation_error")["errors"]) == ["isDefault"]
    assert not Schedule.objects.exists()


@pytest.mark.parametrize("value", [" 30", "+30", "٣٠", "30 ", True])
def test_integers_in_bodies_are_not_rewritten(client, organizer, headers, value):
    body = json.dumps({"title": "Call", "slug": "call", "length": value})

    response = client.post("/v1/event-types", body, content_type="application/json", **headers)

    assert list(assert_problem(response, 400, "validation_error")["errors"]) == ["length"]
    assert not organizer.event_types.exists()


# --- The bounded JSON field and the walker behind it --------------------------------------------


@pytest.mark.parametrize(
    "value,message",
    [
        (nested(9), "Nested deeper than 8 levels"),
        ({str(index): index for index in range(101)}, "at most 100 keys"),
        ({"list": list(range(101))}, "at most 100 items"),
        ({"text": "x" * 5001}, "at most 5000 characters"),
        ({str(index): "x" * 4000 for index in range(5)}, "at most 16384 bytes"),
        ([1, 2], "Must be a JSON object"),
        ({"a": "\x00"}, "NUL"),
    ],
)
def test_bounded_json_field_refuses_what_is_too_big(value, message):
    field = BoundedJSONField()

    with pytest.raises(Exception) as raised:
        field.run_validation(value)

    assert message in str(raised.value.detail)


def test_bounded_json_field_takes_what_fits():
    value = {"deep": nested(6), "list": list(range(100)), "text": "x" * 5000}

    assert BoundedJSONField().run_validation(value) == value
    assert BoundedJSONField(object_only=False).run_validation([1, "a"]) == [1, "a"]


def test_the_walker_does_not_recurse():
    assert inspect_json(nested(100_000), JsonBounds(max_depth=200_000)) is None
    assert inspect_json(nested(100_000), JsonBounds(max_depth=32)).too_deep


def test_template_depth_ignores_brackets_inside_strings():
    assert not json_text_depth_exceeds('{"a": "[[[[[[[[[[", "b": "\\"{{{{{"}', 2)
    assert json_text_depth_exceeds("[[[1]]]", 2)


@pytest.mark.parametrize("query", ["teamId=%D9%A5", "teamId=", "teamId=1&teamId=2", "teamId=%2B1"])
def test_membership_team_filter_is_ascii_digits_given_once(client, headers, query):
    response = client.get(f"/v1/memberships?{query}", **headers)

    assert list(assert_problem(response, 400, "validation_error")["errors"]) == ["teamId"]


@pytest.mark.parametrize("membership_id", ["%D9%A5_%D9%A3", "1_%D9%A3", "1" * 101 + "_1"])
def test_membership_path_ids_are_ascii_digits(client, headers, membership_id):
    response = client.get(f"/v1/memberships/{membership_id}", **headers)

    assert list(assert_problem(response, 400, "validation_error")["errors"]) == ["id"]


def test_nul_in_a_form_encoded_body_is_a_400_before_any_view_reads_it(client):
    from oauth2_provider.models import AccessToken

    body = "grant_type=authorization_code&code=a%00b&client_id=x&redirect_uri=http://127.0.0.1/cb"

    response = client.post("/api/auth/oauth/token", body, content_type="application/x-www-form-urlencoded")

    # The OAuth endpoints answer the RFC 6749 error body their clients read.
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": "invalid_request",
        "error_description": "code: Must not contain NUL characters.",
    }
    assert not AccessToken.objects.exists()


def test_nul_in_the_sign_in_form_is_a_400_problem(client):
    body = "username=ada%00&password=x"

    response = client.post("/auth/login", body, content_type="application/x-www-form-urlencoded")

    assert assert_problem(response, 400, "validation_error")["errors"] == {
        "username": ["Must not contain NUL characters."]
    }


@pytest.mark.parametrize("value", ["true", 1, 0])
def test_team_booleans_are_json_booleans(client, organizer, headers, value):
    body = json.dumps({"name": "Team", "slug": "team", "hideBranding": value})

    response = client.post("/v1/teams", body, content_type="application/json", **headers)

    assert list(assert_problem(response, 400, "validation_error")["errors"]) == ["hideBranding"]
    assert not organizer.memberships.exists()


def test_too_many_query_parameters_is_a_problem_400(client, headers):
    query = "&".join(f"p{index}=1" for index in range(1001))

    response = client.get(f"/v1/schedules?{query}", **headers)

    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in assert_problem(response, 400, "malformed_request")["detail"]
