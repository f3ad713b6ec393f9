"""Current n8n's Cal.com credential and trigger (node version 3), replayed request by request.

n8n-io/n8n, packages/nodes-base/:
- credentials/CalApi.credentials.ts: `Authorization: Bearer {apiKey}` on every request; the
  credential test is `GET {host}/v2/me`.
- nodes/Cal/v2/CalTriggerV2.node.ts (node version 3): `getEventTypes` lists
  `GET /event-types` with `cal-api-version: 2024-06-14` and reads `data[].id/title`;
  `checkExists` pages `GET /webhooks` (or `/event-types/{id}/webhooks`) with `take=250&skip=…`
  and keeps the webhook whose `subscriberUrl`, `active`, `triggers` and `payloadTemplate` match;
  `create` posts `{subscriberUrl, triggers, active: true, secret}` (+ `payloadTemplate`) with a
  secret of 32 random bytes in hex and keeps `data.id`; `delete` deletes `…/webhooks/{id}`.
- nodes/Cal/CalTriggerHelpers.ts: a delivery is accepted when `X-Cal-Signature-256` is the hex
  HMAC-SHA256 of the raw body keyed with the secret; the item is `triggerEvent`, `createdAt` and
  the `payload`'s keys.
- nodes/Cal/helpers/interfaces.ts: every answer is read as `{data}`.
The node's `calApiRequestV2` puts the resource after `{host}/v2`.
"""

import hashlib
import hmac
import json
import secrets
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer
from tests.support.live_services import wait_until
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery

WEBHOOK_PAGE_SIZE = 250
MAX_WEBHOOK_PAGES = 10


class N8nCalApiV2:
    """What the credential and `calApiRequestV2` put on the wire."""

    def __init__(self, client, api_key: str):
        self.client, self.api_key = client, api_key

    def send(self, method: str, resource: str, body=None, query=None, headers=None):
        url = f"/v2{resource}" + (f"?{urlencode(query)}" if query else "")
        extra = bearer(self.api_key)
        extra.update({f"HTTP_{name.upper().replace('-', '_')}": value for name, value in (headers or {}).items()})
        payload = json.dumps(body) if body is not None else ""
        return self.client.generic(method, url, payload, content_type="application/json", **extra)

    def request(self, method: str, resource: str, body=None, query=None, headers=None) -> dict:
        response = self.send(method, resource, body, query, headers)
        assert 200 <= response.status_code < 300, response.content
        return response.json()


class N8nCalTriggerV3:
    """CalTriggerV2.node.ts's loadOptions, webhookMethods and webhook(), with its static data."""

    def __init__(self, api: N8nCalApiV2, *, webhook_url: str, events: list[str], options=None):
        self.api, self.webhook_url, self.events = api, webhook_url, events
        self.options = options or {}
        self.static_data: dict = {}

    def endpoint(self, event_type_id) -> str:
        if isinstance(event_type_id, int) or (isinstance(event_type_id, str) and event_type_id):
            return f"/event-types/{event_type_id}/webhooks"
        return "/webhooks"

    def get_event_types(self) -> list[dict]:
        response = self.api.request("GET", "/event-types", headers={"cal-api-version": "2024-06-14"})
        return sorted(
            ({"name": item["title"], "value": item["id"]} for item in response["data"]), key=lambda o: o["name"].lower()
        )

    def check_exists(self) -> bool:
        event_type_id = self.options.get("eventTypeId")
        template = self.options.get("payloadTemplate") if isinstance(self.options.get("payloadTemplate"), str) else ""
        for page in range(MAX_WEBHOOK_PAGES):
            response = self.api.request(
                "GET", self.endpoint(event_type_id), query={"take": WEBHOOK_PAGE_SIZE, "skip": page * WEBHOOK_PAGE_SIZE}
            )
            for webhook in response["data"]:
                if (
                    webhook["subscriberUrl"] == self.webhook_url
                    and webhook["active"]
                    and len(webhook["triggers"]) == len(self.events)
                    and all(event in webhook["triggers"] for event in self.events)
                    and (webhook.get("payloadTemplate") or "") == template
                ):
                    self.static_data["webhookId"] = webhook["id"]
                    if webhook.get("secret"):
                        self.static_data["webhookSecret"] = webhook["secret"]
                    else:
                        self.static_data.pop("webhookSecret", None)
                    if event_type_id not in (None, ""):
                        self.static_data["webhookEventTypeId"] = event_type_id
                    else:
                        self.static_data.pop("webhookEventTypeId", None)
                    return True
            if len(response["data"]) < WEBHOOK_PAGE_SIZE:
                return False
        return False

    def create(self) -> bool:
        event_type_id = self.options.get("eventTypeId")
        secret = secrets.token_hex(32)
        body = {"subscriberUrl": self.webhook_url, "triggers": self.events, "active": True, "secret": secret}
        if isinstance(self.options.get("payloadTemplate"), str) and self.options["payloadTemplate"]:
            body["payloadTemplate"] = self.options["payloadTemplate"]
        response = self.api.request("POST", self.endpoint(event_type_id), body)
        if response.get("data", {}).get("id") is None:
            return False
        self.static_data.update(webhookId=response["data"]["id"], webhookSecret=secret)
        if event_type_id not in (None, ""):
            self.static_data["webhookEventTypeId"] = event_type_id
        return True

    def delete(self) -> bool:
        if "webhookId" not in self.static_data:
            return True
        endpoint = f"{self.endpoint(self.static_data.get('webhookEventTypeId'))}/{self.static_data['webhookId']}"
        if not 200 <= self.api.send("DELETE", endpoint).status_code < 300:
            return False
        for key in ("webhookId", "webhookSecret", "webhookEventTypeId"):
            self.static_data.pop(key, None)
        return True

    def receive(self, raw_body: bytes, headers: dict) -> dict | None:
        secret = self.static_data.get("webhookSecret")
        if secret:
            expected = hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, headers.get("X-Cal-Signature-256") or ""):
                return None  # 401 Unauthorized
        body = json.loads(raw_body)
        payload = body.get("payload")
        if isinstance(payload, dict):
            return {"triggerEvent": body["triggerEvent"], "createdAt": body["createdAt"], **payload}
        return body


@pytest.mark.django_db
def test_credential_test_is_get_me_with_a_bearer_api_key(api_client):
    user = UserFactory(username="ada", email="ada@example.org")
    api = N8nCalApiV2(api_client, ApiKeyFactory(user=user).raw_key)
    body = api.request("GET", "/me")
    assert body["status"] == "success"
    assert body["data"]["id"] == user.pk and body["data"]["email"] == "ada@example.org"
    assert body["data"]["username"] == "ada"


@pytest.mark.django_db
def test_credential_test_with_a_wrong_key_fails_with_a_v2_401(api_client):
    response = N8nCalApiV2(api_client, "sk_live_wrong").send("GET", "/me")
    assert response.status_code == 401
    body = response.json()
    assert body["status"] == "error" and body["path"] == "/v2/me"
    assert body["error"]["code"] == "UnauthorizedException"


@pytest.mark.django_db(transaction=True)
def test_trigger_v3_subscribes_finds_receives_a_signed_booking_and_deletes(api_client, receiver, start_worker):
    start_worker()
    user = UserFactory()
    event_type = EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"), title="Intro")
    api = N8nCalApiV2(api_client, ApiKeyFactory(user=user).raw_key)
    trigger = N8nCalTriggerV3(
        api,
        webhook_url=receiver.url("/webhook/0b7d4e4a-7f3c-4c1e-9a51-2d8a3c1f9e10/webhook"),
        events=["BOOKING_CREATED", "BOOKING_CANCELLED"],
    )
    assert trigger.get_event_types() == [{"name": "Intro", "value": event_type.pk}]

    assert trigger.check_exists() is False
    assert trigger.create() is True
    webhook = Webhook.objects.get()
    assert trigger.static_data["webhookId"] == str(webhook.pk)
    assert webhook.secret == trigger.static_data["webhookSecret"]
    assert webhook.event_triggers == ["BOOKING_CREATED", "BOOKING_CANCELLED"]

    # Reactivation (a restart with fresh static data) finds the same subscription by listing
    # instead of creating another, and reads its secret back so that signatures stay checked.
    trigger.static_data.clear()
    assert trigger.check_exists() is True
    assert trigger.static_data["webhookId"] == str(webhook.pk)
    assert trigger.static_data["webhookSecret"] == webhook.secret
    assert Webhook.objects.count() == 1

    # A booking made through v2 reaches n8n signed with the secret it chose.
    day = (timezone.now() + timedelta(days=7)).date()
    slots = api.request(
        "GET",
        "/slots",
        query={"eventTypeId": event_type.pk, "start": str(day), "end": str(day + timedelta(days=4))},
        headers={"cal-api-version": "2024-09-04"},
    )["data"]
    start = next(iter(slots.values()))[0]["start"]
    booking = {
        "start": start,
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Ada Lovelace", "email": "ada@example.org", "timeZone": "Europe/London"},
    }
    created = api.send("POST", "/bookings", booking, headers={"cal-api-version": "2024-08-13"})
    assert created.status_code == 201, created.content
    [request] = receiver.wait_for(1)
    wait_until(lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 1)
    item = trigger.receive(request.body, request.headers)
    assert item is not None
    assert item["triggerEvent"] == "BOOKING_CREATED"
    assert item["uid"] == created.json()["data"]["uid"]
    assert item["attendees"][0]["email"] == "ada@example.org"
    assert trigger.receive(request.body.replace(b"BOOKING_CREATED", b"BOOKING_REJECTED"), request.headers) is None

    assert trigger.delete() is True
    assert trigger.static_data == {}
    assert not Webhook.objects.exists()
    assert trigger.check_exists() is False


@pytest.mark.django_db
def test_trigger_v3_with_an_event_type_subscribes_under_the_event_type(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user)
    api = N8nCalApiV2(api_client, ApiKeyFactory(user=user).raw_key)
    trigger = N8nCalTriggerV3(
        api,
        webhook_url="http://127.0.0.1:5678/webhook/abc/webhook",
        events=["BOOKING_RESCHEDULED"],
        options={"eventTypeId": event_type.pk, "payloadTemplate": '{"uid": "{{uid}}"}'},
    )
    assert trigger.check_exists() is False
    assert trigger.create() is True
    webhook = Webhook.objects.get()
    assert webhook.event_type_id == event_type.pk and webhook.user_id is None
    assert webhook.payload_template == '{"uid": "{{uid}}"}'
    # Not among the user's own webhooks (Cal.com lists event-type webhooks under the event type).
    assert api.request("GET", "/webhooks")["data"] == []
    trigger.static_data.pop("webhookId")
    assert trigger.check_exists() is True
    assert trigger.static_data["webhookEventTypeId"] == event_type.pk
    assert trigger.delete() is True
    assert not Webhook.objects.exists()


@pytest.mark.django_db
def test_trigger_v3_create_for_the_same_url_again_is_a_409_and_keeps_the_first(api_client):
    user = UserFactory()
    api = N8nCalApiV2(api_client, ApiKeyFactory(user=user).raw_key)
    body = {"subscriberUrl": "http://127.0.0.1:5678/webhook/x", "triggers": ["BOOKING_CREATED"], "active": True}
    assert api.send("POST", "/webhooks", body).status_code == 201
    again = api.send("POST", "/webhooks", {**body, "secret": "other"})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "ConflictException"
    assert Webhook.objects.count() == 1
