"""n8n's Cal.com trigger, replayed request by request as the node sends them.

n8n-io/n8n, packages/nodes-base/nodes/Cal/:
- GenericFunctions.ts `calApiRequest`: the URL is the credential's `host` (default
  `https://api.cal.com`, no `/v1`) followed by the resource as is (`/hooks`), the API key is the
  `apiKey` query parameter, the body (default `{}`) goes as JSON on every method, GET and DELETE
  included, and any non-2xx answer is an error.
- credentials/CalApi.credentials.ts: the credential test is `GET {host}/v1/memberships?apiKey=`.
- v1/CalTriggerV1.node.ts (node versions 1 and 2; the older CalTrigger.node.ts is the same without
  the secret): the "API version" setting "Before v2.0" uses `/hooks`, "v2.0 onwards" `/webhooks`,
  with the same bodies. `checkExists` lists and looks for its own `subscriberUrl` with every
  selected event in `eventTriggers`, keeping `webhook.id`; `create` posts `{subscriberUrl,
  eventTriggers, active: true, secret, ...options}` (options: `eventTypeId` from the event type
  list, `payloadTemplate`, `appId`) and keeps `webhook.id`; `delete` deletes `/hooks/{id}`.
- CalTriggerHelpers.ts: a delivery is accepted when `X-Cal-Signature-256` is the hex HMAC-SHA256
  of the raw body keyed with the secret; the workflow gets `triggerEvent`, `createdAt` and the
  `payload` object's keys.
"""

import hashlib
import hmac
import json
import secrets
from urllib.parse import urlencode

import pytest

from accounts.tests.factories import ApiKeyFactory, MembershipFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

BEFORE_V2 = 1  # the node's "API version" setting: "Before v2.0" (the default of node version 1)
V2_ONWARDS = 2


class N8nCalApi:
    """What `calApiRequest` puts on the wire."""

    def __init__(self, client, api_key: str, host: str = ""):
        self.client, self.api_key, self.host = client, api_key, host

    def send(self, method: str, resource: str, body=None):
        query = urlencode({"apiKey": self.api_key})
        payload = json.dumps({} if body is None else body)
        return self.client.generic(method, f"{self.host}{resource}?{query}", payload, content_type="application/json")

    def request(self, method: str, resource: str, body=None) -> dict:
        response = self.send(method, resource, body)
        assert 200 <= response.status_code < 300, response.content
        return response.json()


class N8nCalTriggerV1:
    """CalTriggerV1's loadOptions, webhookMethods and webhook(), with its static data."""

    def __init__(self, api: N8nCalApi, *, webhook_url: str, events: list[str], version: int, options=None):
        self.api, self.webhook_url, self.events, self.version = api, webhook_url, events, version
        self.options = options or {}
        self.static_data: dict = {}

    @property
    def collection(self) -> str:
        return "/webhooks" if self.version == V2_ONWARDS else "/hooks"

    def get_event_types(self) -> list[dict]:
        data = self.api.request("GET", "/event-types")
        options = [{"name": item["title"], "value": item["id"]} for item in data["event_types"]]
        return sorted(options, key=lambda option: option["name"].lower())

    def check_exists(self) -> bool:
        data = self.api.request("GET", self.collection)
        for webhook in data["webhooks"]:
            if webhook["subscriberUrl"] == self.webhook_url:
                if any(event not in webhook["eventTriggers"] for event in self.events):
                    return False
                self.static_data["webhookId"] = webhook["id"]
                return True
        return False

    def create(self) -> bool:
        secret = secrets.token_hex(32)
        body = {
            "subscriberUrl": self.webhook_url,
            "eventTriggers": self.events,
            "active": True,
            "secret": secret,
            **self.options,
        }
        response = self.api.request("POST", self.collection, body)
        if response["webhook"].get("id") is None:
            return False
        self.static_data.update(webhookId=response["webhook"]["id"], webhookSecret=secret)
        return True

    def delete(self) -> bool:
        if "webhookId" in self.static_data:
            response = self.api.send("DELETE", f"{self.collection}/{self.static_data['webhookId']}")
            if not 200 <= response.status_code < 300:
                return False
            self.static_data.pop("webhookId")
            self.static_data.pop("webhookSecret", None)
        return True

    def receive(self, raw_body: bytes, headers: dict) -> dict | None:
        """None where the node answers 401 (signature missing or wrong)."""
        secret = self.static_data.get("webhookSecret")
        if secret:
            expected = hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()
            if headers.get("X-Cal-Signature-256") != expected:
                return None
        body = json.loads(raw_body)
        return {"triggerEvent": body["triggerEvent"], "createdAt": body["createdAt"], **body["payload"]}


def activate(trigger: N8nCalTriggerV1) -> None:
    """n8n activates a trigger with checkExists, then create when nothing matching exists."""
    if not trigger.check_exists():
        assert trigger.create()


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts, with both "API version" settings and
# with a host with and without /v1 (GenericFunctions.ts appends the resource to the host as is).
@pytest.mark.parametrize("version", [BEFORE_V2, V2_ONWARDS])
@pytest.mark.parametrize("host", ["", "/v1"])
def test_trigger_lifecycle_activate_receive_and_deactivate(api_client, receiver, version, host):
    user = UserFactory()
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key, host=host)
    trigger = N8nCalTriggerV1(
        api,
        webhook_url=receiver.url("/webhook/4f1c0d0e-2b7a-4c55-9f0e-1f3c5a7b9d21/webhook"),
        events=["BOOKING_CREATED", "BOOKING_CANCELLED", "MEETING_ENDED"],
        version=version,
    )

    assert trigger.check_exists() is False
    activate(trigger)
    webhook = Webhook.objects.get()
    assert trigger.static_data["webhookId"] == str(webhook.pk)
    assert webhook.secret == trigger.static_data["webhookSecret"]
    assert webhook.event_triggers == ["BOOKING_CREATED", "BOOKING_CANCELLED", "MEETING_ENDED"]

    # Reactivating the workflow finds the subscription instead of creating another.
    trigger.static_data.pop("webhookId")
    assert trigger.check_exists() is True
    assert trigger.static_data["webhookId"] == str(webhook.pk)
    assert Webhook.objects.count() == 1

    # A signed delivery passes the node's signature check; a tampered one does not.
    sent = api_client.post(f"/v1/webhooks/{webhook.pk}/test", HTTP_AUTHORIZATION=f"Bearer {api.api_key}")
    assert sent.status_code == 200
    [request] = receiver.requests
    item = trigger.receive(request.body, request.headers)
    assert item is not None
    assert item["triggerEvent"] == "PING" and item["createdAt"].endswith("Z")
    assert "title" in item and "startTime" in item
    assert trigger.receive(request.body.replace(b"PING", b"PONG"), request.headers) is None

    assert trigger.delete() is True
    assert "webhookId" not in trigger.static_data
    assert not Webhook.objects.exists()
    assert trigger.check_exists() is False


# n8n/packages/nodes-base/nodes/Cal/CalTrigger.node.ts (before the v1/v2 split): no secret in the
# body, so the service generates one; the node never checks signatures.
def test_trigger_without_a_secret_gets_a_generated_one_and_deletes_cleanly(api_client):
    user = UserFactory()
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key)
    body = {"subscriberUrl": "http://127.0.0.1:5678/webhook/old/webhook", "eventTriggers": ["BOOKING_CREATED"]}

    created = api.request("POST", "/hooks", {**body, "active": True})

    webhook = Webhook.objects.get(pk=created["webhook"]["id"])
    assert webhook.secret.startswith("whsec_")
    assert api.request("DELETE", f"/hooks/{webhook.pk}") == {
        "message": f"Webhook with id: {webhook.pk} deleted successfully"
    }
    assert not Webhook.objects.exists()


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts: loadOptions.getEventTypes reads
# `event_types[].title` and `.id`, and the chosen id goes into the body as the `eventTypeId` option.
def test_event_type_option_scopes_the_subscription_and_check_exists_still_finds_it(api_client):
    user = UserFactory()
    EventTypeFactory(owner=user, title="Zebra call")
    chosen = EventTypeFactory(owner=user, title="Intro call")
    EventTypeFactory(title="Someone else's")
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key)
    trigger = N8nCalTriggerV1(
        api, webhook_url="http://127.0.0.1:5678/webhook/a/webhook", events=["BOOKING_CREATED"], version=BEFORE_V2
    )

    options = trigger.get_event_types()
    assert [option["name"] for option in options] == ["Intro call", "Zebra call"]
    trigger.options = {"eventTypeId": options[0]["value"]}
    activate(trigger)

    webhook = Webhook.objects.get()
    assert webhook.event_type_id == chosen.pk
    trigger.static_data.clear()
    assert trigger.check_exists() is True


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts: the `payloadTemplate` option is passed
# through; the subscriber then receives the rendered template instead of the default envelope.
def test_payload_template_option_is_stored_and_rendered(api_client, receiver):
    user = UserFactory()
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key)
    template = '{"event": "{{triggerEvent}}", "what": "{{title}}", "start": "{{startTime}}"}'
    trigger = N8nCalTriggerV1(
        api,
        webhook_url=receiver.url("/webhook/t/webhook"),
        events=["BOOKING_CREATED"],
        version=BEFORE_V2,
        options={"payloadTemplate": template},
    )

    activate(trigger)

    webhook = Webhook.objects.get()
    assert webhook.payload_template == template
    listed = api.request("GET", "/hooks")["webhooks"]
    assert listed[0]["payloadTemplate"] == template
    api_client.post(f"/hooks/{webhook.pk}/test", HTTP_AUTHORIZATION=f"Bearer {api.api_key}")
    [request] = receiver.requests
    assert set(json.loads(request.body)) == {"event", "what", "start"}
    expected = hmac.new(trigger.static_data["webhookSecret"].encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Cal-Signature-256"] == expected


# n8n/packages/nodes-base/credentials/CalApi.credentials.ts: the credential test.
def test_credential_test_request_succeeds_with_the_key_in_the_query(api_client):
    user = UserFactory()
    MembershipFactory(user=user)
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key, host="/v1")

    assert len(api.request("GET", "/memberships")["memberships"]) == 1
    assert N8nCalApi(api_client, "sk_live_wrong", host="/v1").send("GET", "/memberships").status_code == 401


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts: when the selected events change while
# the node's static data is lost, checkExists fails and create posts the same URL again. Cal.com
# refused that too (one webhook per owner and subscriberUrl); the node reports the error.
def test_create_again_for_the_same_url_is_a_409_and_keeps_the_first(api_client):
    user = UserFactory()
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key)
    url = "http://127.0.0.1:5678/webhook/b/webhook"
    activate(N8nCalTriggerV1(api, webhook_url=url, events=["BOOKING_CREATED"], version=BEFORE_V2))
    first = Webhook.objects.get()

    again = N8nCalTriggerV1(api, webhook_url=url, events=["BOOKING_CREATED", "MEETING_ENDED"], version=BEFORE_V2)
    assert again.check_exists() is False
    response = api.send("POST", "/hooks", {"subscriberUrl": url, "eventTriggers": again.events, "active": True})

    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "conflict" and response.json()["message"]
    assert list(Webhook.objects.values_list("pk", "event_triggers")) == [(first.pk, ["BOOKING_CREATED"])]


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts: an `eventTypeId` typed as an
# expression may name an event type the key's user cannot see: a 400 naming the field, nothing saved.
def test_event_type_option_the_user_cannot_see_is_400_and_writes_nothing(api_client):
    api = N8nCalApi(api_client, ApiKeyFactory(user=UserFactory()).raw_key)
    foreign = EventTypeFactory()
    body = {
        "subscriberUrl": "http://127.0.0.1:5678/webhook/c/webhook",
        "eventTriggers": ["BOOKING_CREATED"],
        "active": True,
        "secret": secrets.token_hex(32),
        "eventTypeId": foreign.pk,
    }

    response = api.send("POST", "/hooks", body)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert "eventTypeId" in response.json()["errors"]
    assert not Webhook.objects.exists()


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts: deleting a subscription that is gone
# (removed by hand) fails, and the node keeps its static data.
def test_delete_of_a_vanished_subscription_is_404_and_the_node_keeps_its_state(api_client):
    user = UserFactory()
    api = N8nCalApi(api_client, ApiKeyFactory(user=user).raw_key)
    trigger = N8nCalTriggerV1(
        api, webhook_url="http://127.0.0.1:5678/webhook/d/webhook", events=["BOOKING_CREATED"], version=BEFORE_V2
    )
    activate(trigger)
    Webhook.objects.all().delete()

    response = api.send("DELETE", f"/hooks/{trigger.static_data['webhookId']}")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert trigger.delete() is False
    assert "webhookId" in trigger.static_data
