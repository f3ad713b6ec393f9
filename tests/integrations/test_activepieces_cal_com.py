"""Activepieces' Cal.com piece (its API v1 triggers), replayed as it calls the API.

activepieces/activepieces, packages/pieces/cal-com/src/lib/triggers/register-webhook.ts (the piece's
actions and its later community version talk to Cal.com's API v2 and are not replayed here):
- onEnable: `POST https://api.cal.com/v1/hooks?apiKey=…` with the JSON body `{eventTriggers: [name],
  subscriberUrl: webhookUrl, active: true}`; only a status of exactly 200 counts, and then the
  whole `webhook` object of the answer is stored (`id` string, `userId` number, `eventTypeId`,
  `payloadTemplate`, `appId` null or string, `eventTriggers` list, `subscriberUrl` string).
- onDisable: `DELETE https://api.cal.com/v1/hooks/{stored id}?apiKey=…`.
- run: the delivery's body is the trigger's output as is.
packages/pieces/cal-com/src/lib/triggers/index.ts: the triggers are BOOKING_CANCELLED,
BOOKING_CREATED and BOOKING_RESCHEDULED.
"""

import json
from urllib.parse import urlencode

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

TRIGGERS = ["BOOKING_CANCELLED", "BOOKING_CREATED", "BOOKING_RESCHEDULED"]


class ActivepiecesCalTrigger:
    """registerWebhooks(name): onEnable, onDisable and run, with the flow's store."""

    def __init__(self, client, api_key: str, name: str, webhook_url: str):
        self.client, self.api_key, self.name, self.webhook_url = client, api_key, name, webhook_url
        self.store: dict = {}

    def url(self, path: str) -> str:
        return f"{path}?{urlencode({'apiKey': self.api_key})}"

    def on_enable(self):
        body = {"eventTriggers": [self.name], "subscriberUrl": self.webhook_url, "active": True}
        response = self.client.post(self.url("/v1/hooks"), json.dumps(body), content_type="application/json")
        if response.status_code == 200:
            self.store[f"cal_com_trigger_{self.name}"] = response.json()["webhook"]
        return response

    def on_disable(self):
        data = self.store.get(f"cal_com_trigger_{self.name}")
        if data is not None:
            return self.client.delete(self.url(f"/v1/hooks/{data['id']}"))
        return None

    @staticmethod
    def run(raw_body: bytes) -> list:
        return [json.loads(raw_body)]


# activepieces/packages/pieces/cal-com/src/lib/triggers/register-webhook.ts: onEnable, the stored
# `webhook` object's fields and types, a delivery as the trigger's output, onDisable.
@pytest.mark.parametrize("name", TRIGGERS)
def test_trigger_enable_store_receive_and_disable(api_client, receiver, name):
    user = UserFactory()
    api_key = ApiKeyFactory(user=user).raw_key
    flow_url = receiver.url("/api/v1/webhooks/3fazyQLtpJ4mhg5l8Nsux")
    trigger = ActivepiecesCalTrigger(api_client, api_key, name, flow_url)

    response = trigger.on_enable()

    assert response.status_code == 200
    stored = trigger.store[f"cal_com_trigger_{name}"]
    webhook = Webhook.objects.get()
    assert stored["id"] == str(webhook.pk)
    assert stored["userId"] == user.pk
    assert stored["eventTypeId"] is None and stored["payloadTemplate"] is None and stored["appId"] is None
    assert stored["eventTriggers"] == [name]
    assert stored["subscriberUrl"] == flow_url

    api_client.post(f"/v1/hooks/{webhook.pk}/test", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    [request] = receiver.requests
    [output] = trigger.run(request.body)
    assert set(output) == {"triggerEvent", "createdAt", "payload"}

    disabled = trigger.on_disable()
    assert disabled.status_code == 200
    assert not Webhook.objects.exists()


# activepieces/packages/pieces/cal-com/src/lib/triggers/register-webhook.ts: one flow per trigger,
# each with its own webhook URL, all on the same API key: separate subscriptions, removed one by one.
def test_three_flows_on_one_key_subscribe_and_unsubscribe_independently(api_client):
    api_key = ApiKeyFactory(user=UserFactory()).raw_key
    triggers = [
        ActivepiecesCalTrigger(api_client, api_key, name, f"http://127.0.0.1:9/api/v1/webhooks/flow{index}")
        for index, name in enumerate(TRIGGERS)
    ]

    assert [trigger.on_enable().status_code for trigger in triggers] == [200, 200, 200]
    assert Webhook.objects.count() == 3

    triggers[1].on_disable()
    assert sorted(trigger for row in Webhook.objects.values_list("event_triggers", flat=True) for trigger in row) == [
        "BOOKING_CANCELLED",
        "BOOKING_RESCHEDULED",
    ]


# activepieces/packages/pieces/cal-com/src/lib/triggers/register-webhook.ts: with a wrong API key
# the answer is not 200, so nothing is stored, and the service wrote nothing either.
def test_enable_with_a_wrong_key_is_401_and_nothing_is_stored(api_client):
    trigger = ActivepiecesCalTrigger(api_client, "sk_live_not_a_key", "BOOKING_CREATED", "http://127.0.0.1:9/x")

    response = trigger.on_enable()

    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_token"
    assert trigger.store == {}
    assert not Webhook.objects.exists()
