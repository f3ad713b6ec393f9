"""Every answer arrives whole: its body is exactly as long as its `Content-Length` says.

A strict HTTP client (a socket, `Connection: close`, read to the end) sends a broad run of requests
to the production server (gunicorn with config/gunicorn.conf.py): every operation of both OpenAPI
documents without credentials, with a wrong key and with the caller's key (writes with an empty
body; v2 in each `cal-api-version`), plus the answers once found cut short. An answer whose body is
shorter or longer than its `Content-Length`, or whose JSON does not parse, fails the test.
Django's test client traffic of the whole suite gets the same length check (conftest.py)."""

import itertools
import json
import socket
import threading

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calv2.versions import KNOWN
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.outages import Gunicorn
from tests.support.strict_http import CutShort, strict_request
from tests.test_outages_live import live_database_url
from webhooks.tests.factories import WebhookFactory


@pytest.fixture
def server(db):
    gunicorn = Gunicorn({"DJANGO_SETTINGS_MODULE": "config.settings_test", "DATABASE_URL": live_database_url()})
    gunicorn.start()
    yield gunicorn
    gunicorn.stop()


def _operations(document: dict):
    for path, item in document["paths"].items():
        for method in item:
            if method in ("get", "post", "put", "patch", "delete"):
                yield method.upper(), path


def _filled(path: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    # Any other path parameter: a value no object has.
    while "{" in path:
        start, end = path.index("{"), path.index("}")
        path = path[:start] + "999999" + path[end + 1 :]
    return path


@pytest.mark.django_db(transaction=True)
def test_every_answer_of_a_broad_live_run_is_whole(server):
    user = UserFactory()
    key = ApiKeyFactory(user=user).raw_key
    schedule = ScheduleFactory(user=user)
    event_type = EventTypeFactory(owner=user, schedule=schedule)
    booking = BookingFactory(organizer=user, event_type=event_type)
    webhook = WebhookFactory(user=user)
    values = {
        "id": str(booking.pk),
        "bookingUid": booking.uid,
        "uid": booking.uid,
        "eventTypeId": str(event_type.pk),
        "scheduleId": str(schedule.pk),
        "webhookId": str(webhook.pk),
        "userId": str(user.pk),
    }
    v1 = strict_request(server.url, "GET", "/v1/openapi.json").json()
    v2 = strict_request(server.url, "GET", "/v2/openapi.json").json()
    credentials = [{}, {"Authorization": "Bearer cal_live_wrong"}, {"Authorization": f"Bearer {key}"}]
    versions = itertools.cycle(KNOWN)
    answered = []
    for document in (v1, v2):
        for method, path in _operations(document):
            for headers in credentials:
                headers = dict(headers)
                if path.startswith("/v2/"):
                    headers["cal-api-version"] = next(versions)
                body = b"{}" if method in ("POST", "PUT", "PATCH") else b""
                answer = strict_request(server.url, method, _filled(path, values), headers, body)
                answered.append((method, path, answer.status))
                # v2's envelope, but for its OAuth token endpoint, which answers RFC 6749's errors.
                if path.startswith("/v2/") and answer.status >= 400 and path != "/v2/auth/oauth2/token":
                    assert answer.json()["status"] == "error", (method, path, answer.body[:300])
    statuses = {status for _, _, status in answered}
    assert len(answered) > 250
    assert {200, 400, 401, 404} <= statuses


@pytest.mark.django_db(transaction=True)
def test_the_v2_errors_once_cut_short_arrive_whole(server):
    key = ApiKeyFactory().raw_key
    auth = {"Authorization": f"Bearer {key}", "cal-api-version": "2024-08-13"}

    wrong_key = strict_request(server.url, "GET", "/v2/me", {"Authorization": "Bearer cal_live_nope"})
    unknown_uid = strict_request(server.url, "GET", "/v2/bookings/no-such-uid", auth)
    hook = json.dumps({"active": True, "subscriberUrl": "http://127.0.0.1:9/hook", "triggers": ["BOOKING_CREATED"]})
    first = strict_request(server.url, "POST", "/v2/webhooks", auth, hook.encode())
    duplicate = strict_request(server.url, "POST", "/v2/webhooks", auth, hook.encode())

    assert wrong_key.status == 401
    assert (
        wrong_key.json()["error"]["details"]["message"] == "The access token or API key is unknown, expired or revoked."
    )
    assert (unknown_uid.status, unknown_uid.json()["error"]["code"]) == (404, "NotFoundException")
    assert first.status == 201
    assert (duplicate.status, duplicate.json()["error"]["code"]) == (409, "ConflictException")


@pytest.mark.django_db(transaction=True)
def test_a_request_line_over_the_limit_is_a_414_in_each_versions_error_shape(server):
    v2 = strict_request(server.url, "GET", "/v2/bookings?" + "a" * 5000)
    v1 = strict_request(server.url, "GET", "/v1/bookings?" + "a" * 5000)

    assert (v2.status, v2.headers["content-type"]) == (414, "application/json")
    envelope = v2.json()
    assert envelope["status"] == "error"
    assert envelope["path"].startswith("/v2/bookings?aaa")
    assert envelope["error"]["code"] == "UriTooLongException"
    assert envelope["error"]["details"]["code"] == "uri_too_long"
    assert envelope["error"]["message"].startswith("Request Line is too large")
    assert (v1.status, v1.headers["content-type"]) == (414, "application/problem+json")
    assert v1.json()["code"] == "uri_too_long"


@pytest.mark.parametrize(("declared", "sent"), [(10, b"short"), (3, b"too long")])
def test_the_strict_client_fails_a_body_of_another_length(declared, sent):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer_once():
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (declared, sent))

    thread = threading.Thread(target=answer_once)
    thread.start()
    try:
        with pytest.raises(CutShort, match=f"Content-Length {declared}, body of {len(sent)} bytes"):
            strict_request(f"http://127.0.0.1:{port}", "GET", "/")
    finally:
        thread.join(5)
        listener.close()


@pytest.mark.django_db(transaction=True)
def test_too_many_headers_on_a_v2_path_is_a_431_in_v2s_envelope(server):
    headers = {f"X-Header-{index}": "x" for index in range(101)}

    v2 = strict_request(server.url, "GET", "/v2/me", headers)
    v1 = strict_request(server.url, "GET", "/v1/me", headers)

    assert (v2.status, v2.headers["content-type"]) == (431, "application/json")
    assert v2.json()["path"] == "/v2/me"
    assert v2.json()["error"]["code"] == "RequestHeaderFieldsTooLargeException"
    assert (v1.status, v1.headers["content-type"]) == (431, "application/problem+json")
