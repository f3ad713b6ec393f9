"""`Idempotency-Key` on the API's writes (core.idempotency; docs/api.md, "Retrying writes safely"):
a retried write runs once and gets the first answer byte for byte, across users, threads and a
crash of the server process."""

import json
import threading
import time as clock
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, time, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import pytest
import requests
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from core.idempotency import purge_expired
from core.models import IdempotencyRecord
from scheduling.models import Booking, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from tests.support.idempotency_keys import key_held_elsewhere
from webhooks.models import Webhook, WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

BERLIN = ZoneInfo("Europe/Berlin")


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def start_at(hour: int) -> str:
    return datetime.combine(monday_ahead(), time(hour), tzinfo=BERLIN).isoformat()


def booking_body(event_type, hour: int = 10, name: str = "Grace Hopper") -> dict:
    return {
        "eventTypeId": event_type.pk,
        "start": start_at(hour),
        "responses": {"name": name, "email": "grace@example.org"},
        "timeZone": "Europe/London",
        "language": "en",
        "metadata": {},
    }


@pytest.fixture
def raw_key(organizer):
    return ApiKeyFactory(user=organizer).raw_key


@pytest.fixture
def webhooks(organizer, event_type):
    """Two subscriptions that hear the organizer's bookings: one outbox row each per event."""
    return [
        WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED]),
        WebhookFactory(user=None, event_type=event_type, event_triggers=[WebhookTrigger.BOOKING_CREATED]),
    ]


class N8nHttpRequest:
    """What n8n's Cal.com node (and its HTTP Request node with "Retry On Fail") sends: the API key as
    `?apiKey=`, a JSON body, and the same request again after a timeout. Here the retry carries the
    key it was first sent with, as the IETF draft asks of a client."""

    def __init__(self, client, api_key: str):
        self.client, self.api_key = client, api_key

    def send(self, method: str, path: str, body, idempotency_key: str | None):
        headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key is not None else {}
        return self.client.generic(
            method,
            f"{path}?{urlencode({'apiKey': self.api_key})}",
            json.dumps(body),
            content_type="application/json",
            **headers,
        )


def written() -> tuple[int, ...]:
    return (
        Booking.objects.count(),
        Webhook.objects.count(),
        WebhookDelivery.objects.count(),
        IdempotencyRecord.objects.count(),
    )


# --- the retry an integration makes ------------------------------------------------------------


@pytest.mark.django_db
def test_n8n_retry_of_post_bookings_gets_the_first_answer_and_books_once(client, raw_key, event_type, webhooks):
    n8n = N8nHttpRequest(client, raw_key)
    first = n8n.send("POST", "/bookings", booking_body(event_type), "n8n-exec-41-node-3")
    assert first.status_code == 200, first.content
    assert "Idempotent-Replayed" not in first

    retry = n8n.send("POST", "/bookings", booking_body(event_type), "n8n-exec-41-node-3")

    assert retry.status_code == 200
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.content == first.content
    assert retry["Location"] == first["Location"]
    assert retry["Content-Type"] == first["Content-Type"]
    assert Booking.objects.count() == 1
    assert WebhookDelivery.objects.filter(trigger_event=WebhookTrigger.BOOKING_CREATED).count() == 2


@pytest.mark.django_db
def test_n8n_retry_of_post_webhooks_creates_one_subscription(client, raw_key):
    n8n = N8nHttpRequest(client, raw_key)
    body = {"subscriberUrl": "http://127.0.0.1:9/n8n", "eventTriggers": ["BOOKING_CREATED"], "active": True}
    first = n8n.send("POST", "/hooks", body, "trigger-activate-7")
    retry = n8n.send("POST", "/hooks", body, "trigger-activate-7")

    assert first.status_code == retry.status_code == 200
    assert retry.content == first.content  # the secret shown once is shown again to the same retry
    assert retry["Idempotent-Replayed"] == "true"
    assert Webhook.objects.count() == 1
    # Without the key the same body is the duplicate it always was.
    assert n8n.send("POST", "/hooks", body, None).status_code == 409


@pytest.mark.django_db
def test_patch_and_delete_are_replayed_too(api_client, raw_key, organizer):
    booking = BookingFactory(organizer=organizer, status=BookingStatus.ACCEPTED)
    webhook = WebhookFactory(user=organizer)
    auth = bearer(raw_key)

    patch = {"eventTriggers": ["BOOKING_CANCELLED"]}
    first = api_client.patch(f"/v1/webhooks/{webhook.pk}", patch, format="json", HTTP_IDEMPOTENCY_KEY="p1", **auth)
    Webhook.objects.filter(pk=webhook.pk).update(event_triggers=["BOOKING_PAID"])
    again = api_client.patch(f"/v1/webhooks/{webhook.pk}", patch, format="json", HTTP_IDEMPOTENCY_KEY="p1", **auth)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert Webhook.objects.get(pk=webhook.pk).event_triggers == ["BOOKING_PAID"]  # nothing ran again

    path = f"/v1/bookings/{booking.pk}?cancellationReason=Ill"
    first = api_client.delete(path, HTTP_IDEMPOTENCY_KEY="d1", **auth)
    again = api_client.delete(path, HTTP_IDEMPOTENCY_KEY="d1", **auth)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert WebhookDelivery.objects.filter(trigger_event="BOOKING_CANCELLED").count() == 0  # not subscribed
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED


@pytest.mark.django_db
def test_requests_without_the_header_run_every_time(api_client, raw_key, event_type):
    auth = bearer(raw_key)
    first = api_client.post("/v1/bookings", booking_body(event_type, 10), format="json", **auth)
    second = api_client.post("/v1/bookings", booking_body(event_type, 11), format="json", **auth)
    assert (first.status_code, second.status_code) == (200, 200)
    assert Booking.objects.count() == 2
    assert IdempotencyRecord.objects.count() == 0


# --- scope and reuse ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_same_key_from_two_users_is_two_keys(api_client):
    answers = []
    for index in range(2):
        user = UserFactory()
        raw = ApiKeyFactory(user=user).raw_key
        event_type = EventTypeFactory(owner=user, length=30)
        response = api_client.post(
            "/v1/bookings",
            booking_body(event_type, name=f"Booker {index}"),
            format="json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
            HTTP_IDEMPOTENCY_KEY="shared-key",
        )
        assert response.status_code == 200, response.content
        assert "Idempotent-Replayed" not in response
        answers.append(response.json())
    assert answers[0]["id"] != answers[1]["id"]
    assert Booking.objects.count() == 2
    assert IdempotencyRecord.objects.filter(key="shared-key").count() == 2


@pytest.mark.django_db
def test_the_key_reused_with_another_body_is_422_and_changes_nothing(api_client, raw_key, event_type, webhooks):
    auth = {**bearer(raw_key), "HTTP_IDEMPOTENCY_KEY": "k-1"}
    assert api_client.post("/v1/bookings", booking_body(event_type, 10), format="json", **auth).status_code == 200
    before = written()

    other_body = api_client.post("/v1/bookings", booking_body(event_type, 11), format="json", **auth)
    other_path = api_client.post("/v1/webhooks", {"subscriberUrl": "http://127.0.0.1:9/x"}, format="json", **auth)
    other_method = api_client.delete(f"/v1/bookings/{Booking.objects.get().pk}", **auth)

    for response in (other_body, other_path, other_method):
        assert response.status_code == 422
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "idempotency_key_reused"
    assert "another body" in other_body.json()["detail"]
    assert "POST /v1/bookings" in other_path.json()["detail"]
    assert written() == before
    assert Booking.objects.get().status == BookingStatus.ACCEPTED


@pytest.mark.django_db
def test_the_same_json_in_another_key_order_or_spacing_is_the_same_request(client, raw_key, event_type):
    body = booking_body(event_type)
    auth = {**bearer(raw_key), "HTTP_IDEMPOTENCY_KEY": "order"}
    first = client.post("/v1/bookings", json.dumps(body), content_type="application/json", **auth)
    reordered = json.dumps(dict(reversed(list(body.items()))), indent=2)
    again = client.post("/v1/bookings", reordered, content_type="application/json", **auth)
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.content == first.content


@pytest.mark.django_db
@pytest.mark.parametrize("bad_key", ["", "x" * 256, "tab\there", "caf\u00e9"])
def test_a_malformed_key_is_a_400_and_changes_nothing(client, raw_key, event_type, bad_key):
    before = written()
    response = client.post(
        "/v1/bookings",
        json.dumps(booking_body(event_type)),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw_key}",
        HTTP_IDEMPOTENCY_KEY=bad_key,
    )
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert problem["errors"] == {"Idempotency-Key": ["Must be 1 to 255 printable ASCII characters."]}
    assert written() == before


@pytest.mark.django_db
def test_a_4xx_answer_is_stored_and_replayed(api_client, raw_key, event_type):
    auth = {**bearer(raw_key), "HTTP_IDEMPOTENCY_KEY": "bad-body"}
    body = {**booking_body(event_type), "unknownField": 1}
    first = api_client.post("/v1/bookings", body, format="json", **auth)
    again = api_client.post("/v1/bookings", body, format="json", **auth)
    assert first.status_code == again.status_code == 400
    assert again["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    assert again["Content-Type"] == "application/problem+json"
    assert Booking.objects.count() == 0


@pytest.mark.django_db
def test_a_5xx_answer_is_not_stored_and_the_retry_runs(api_client, raw_key, monkeypatch):
    from webhooks import views

    real_create = views.webhook_create
    monkeypatch.setattr(views, "webhook_create", lambda **kwargs: 1 / 0)
    auth = {**bearer(raw_key), "HTTP_IDEMPOTENCY_KEY": "flaky"}
    body = {"subscriberUrl": "http://127.0.0.1:9/flaky", "eventTriggers": ["BOOKING_CREATED"]}
    failed = api_client.post("/v1/webhooks", body, format="json", **auth)
    assert failed.status_code == 500
    assert IdempotencyRecord.objects.count() == 0

    monkeypatch.setattr(views, "webhook_create", real_create)
    retried = api_client.post("/v1/webhooks", body, format="json", **auth)
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried
    assert Webhook.objects.count() == 1


@pytest.mark.django_db
def test_unauthenticated_and_refused_requests_are_not_stored(api_client, event_type):
    response = api_client.post("/v1/bookings", booking_body(event_type), format="json", HTTP_IDEMPOTENCY_KEY="anon")
    assert response.status_code == 401
    assert IdempotencyRecord.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("method,path", [("patch", "/v1/me"), ("delete", "/v1/me"), ("put", "/v1/schedules/1")])
def test_a_method_the_endpoint_does_not_allow_is_405_whatever_the_key_and_is_not_stored(
    api_client, raw_key, event_type, method, path
):
    first = api_client.post(
        "/v1/bookings", booking_body(event_type), format="json", HTTP_IDEMPOTENCY_KEY="used-once", **bearer(raw_key)
    )
    assert first.status_code == 200

    for key in ("used-once", "fresh", "bad key \u00e9"):
        response = getattr(api_client, method)(
            path, {"name": "x"}, format="json", HTTP_IDEMPOTENCY_KEY=key, **bearer(raw_key)
        )
        assert response.status_code == 405, (key, response.json())
        assert response.json()["code"] == "method_not_allowed"
    assert IdempotencyRecord.objects.count() == 1


@pytest.mark.django_db
def test_after_the_retention_the_key_runs_again(api_client, raw_key, event_type, settings):
    auth = {**bearer(raw_key), "HTTP_IDEMPOTENCY_KEY": "old"}
    assert api_client.post("/v1/bookings", booking_body(event_type, 10), format="json", **auth).status_code == 200
    IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    again = api_client.post("/v1/bookings", booking_body(event_type, 11), format="json", **auth)

    assert again.status_code == 200 and "Idempotent-Replayed" not in again
    assert Booking.objects.count() == 2
    record = IdempotencyRecord.objects.get()
    assert record.expires_at > timezone.now() + timedelta(hours=23)


@pytest.mark.django_db
def test_the_purge_deletes_expired_records_in_batches_and_keeps_the_rest(organizer):
    now = timezone.now()
    for index in range(7):
        IdempotencyRecord.objects.create(
            user=organizer,
            key=f"k{index}",
            method="POST",
            path="/v1/bookings",
            request_hash="0" * 64,
            response_status=200,
            response_body=b"{}",
            created_at=now - timedelta(days=2),
            expires_at=now - timedelta(seconds=1) if index < 5 else now + timedelta(hours=1),
        )
    assert purge_expired(batch_size=2) == 5
    assert sorted(IdempotencyRecord.objects.values_list("key", flat=True)) == ["k5", "k6"]


@pytest.mark.django_db
def test_beat_runs_the_purge(organizer, settings):
    from core.tasks import purge_idempotency_records

    schedule = settings.CELERY_BEAT_SCHEDULE["idempotency-purge"]
    assert schedule["task"] == purge_idempotency_records.name
    IdempotencyRecord.objects.create(
        user=organizer,
        key="gone",
        method="POST",
        path="/v1/bookings",
        request_hash="0" * 64,
        response_status=200,
        response_body=b"{}",
        created_at=timezone.now() - timedelta(days=2),
        expires_at=timezone.now() - timedelta(days=1),
    )
    assert purge_idempotency_records.apply().get() == 1
    assert not IdempotencyRecord.objects.exists()


# --- concurrency -------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_repeat_while_the_first_runs_is_409_with_retry_after(api_client, raw_key, organizer, event_type):
    """The first request holds the key (its transaction's advisory lock): the repeat answers at
    once instead of waiting for it."""
    with key_held_elsewhere(user_id=organizer.pk, key="busy"):
        began = clock.monotonic()
        response = api_client.post(
            "/v1/bookings",
            booking_body(event_type),
            format="json",
            HTTP_AUTHORIZATION=f"Bearer {raw_key}",
            HTTP_IDEMPOTENCY_KEY="busy",
        )
        waited = clock.monotonic() - began
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_in_use"
    assert response["Retry-After"] == "1"
    assert waited < 5  # answered, not queued behind the lock (a generous bound, not a timing test)
    assert Booking.objects.count() == 0


PARALLEL = 20


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_duplicates_book_once_and_all_get_the_same_booking(live_server):
    organizer = UserFactory(time_zone="Europe/Berlin")
    raw = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30)
    WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    WebhookFactory(user=None, event_type=event_type, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    body = booking_body(event_type)
    barrier = threading.Barrier(PARALLEL)
    statuses_seen: list[int] = []

    def book(_index: int) -> requests.Response:
        barrier.wait(timeout=30)
        headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": "pipedream-retry-1"}
        while True:  # a client that honours Retry-After on idempotency_key_in_use
            response = requests.post(f"{live_server.url}/v1/bookings", json=body, headers=headers, timeout=60)
            statuses_seen.append(response.status_code)
            if response.status_code != 409:
                return response
            assert response.json()["code"] == "idempotency_key_in_use"
            clock.sleep(float(response.headers["Retry-After"]))

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        answers = list(pool.map(book, range(PARALLEL)))

    assert [answer.status_code for answer in answers] == [200] * PARALLEL
    assert len({answer.content for answer in answers}) == 1
    assert sum("Idempotent-Replayed" not in answer.headers for answer in answers) == 1
    assert set(statuses_seen) <= {200, 409}
    booking = Booking.objects.get()
    assert answers[0].json()["id"] == booking.pk
    deliveries = WebhookDelivery.objects.filter(trigger_event=WebhookTrigger.BOOKING_CREATED)
    assert deliveries.count() == 2
    assert len({delivery.webhook_id for delivery in deliveries}) == 2


# --- the document ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_document_lists_the_header_and_its_answers_on_every_write(client):
    document = client.get("/v1/openapi.json").json()
    writes = [
        (path, method, operation)
        for path, operations in document["paths"].items()
        if path.startswith("/v1/")
        for method, operation in operations.items()
        if method in ("post", "patch", "delete")
    ]
    assert len(writes) > 20
    for path, method, operation in writes:
        headers = {parameter["name"] for parameter in operation["parameters"] if parameter["in"] == "header"}
        assert "Idempotency-Key" in headers, (method, path)
        assert {"409", "422"} <= set(operation["responses"]), (method, path)
        success = next(status for status in operation["responses"] if status.startswith("2"))
        assert "Idempotent-Replayed" in operation["responses"][success]["headers"], (method, path)
        assert "idempotency_key_in_use" in operation["responses"]["409"]["description"], (method, path)
        assert "idempotency_key_reused" in operation["responses"]["422"]["description"], (method, path)
