"""Payload templates of OOO_CREATED webhooks are checked against an out-of-office entry's payload
(`{{oooEntry.*}}`), not a booking's, and render the entry when one is created."""

import json
from datetime import UTC, datetime

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from holds.services import out_of_office_create
from webhooks.models import Webhook, WebhookDelivery
from webhooks.templating import render

pytestmark = pytest.mark.django_db

TEMPLATE = (
    '{"who": "{{oooEntry.user.email}}", "until": "{{oooEntry.end}}", "cover": "{{oooEntry.toUser.name}}",'
    ' "why": "{{oooEntry.reason.reason}}", "event": "{{triggerEvent}}"}'
)


def create(api_client, key, template, triggers=("OOO_CREATED",)):
    return api_client.post(
        "/v1/webhooks",
        {"subscriberUrl": "http://127.0.0.1:9/x", "eventTriggers": list(triggers), "payloadTemplate": template},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {key.raw_key}",
    )


def test_an_ooo_template_is_accepted_and_renders_the_entry_created(api_client):
    key = ApiKeyFactory(user=UserFactory(email="ada@example.org"))
    created = create(api_client, key, TEMPLATE)
    assert created.status_code == 200, created.content
    covering = UserFactory(name="Alan Turing")

    out_of_office_create(
        user=key.user,
        start=datetime(2030, 1, 7, tzinfo=UTC),
        end=datetime(2030, 1, 14, tzinfo=UTC),
        reason="vacation",
        to_user_id=covering.pk,
    )

    delivery = WebhookDelivery.objects.get()
    rendered = render(
        TEMPLATE, trigger_event="OOO_CREATED", created_at="2030-01-01T00:00:00Z", payload=delivery.payload
    )
    assert json.loads(rendered.body) == {
        "who": "ada@example.org",
        "until": "2030-01-14T00:00:00.000Z",
        "cover": "Alan Turing",
        "why": "vacation",
        "event": "OOO_CREATED",
    }


def test_a_booking_and_ooo_webhook_takes_variables_of_either(api_client):
    key = ApiKeyFactory(user=UserFactory())
    template = '{"who": "{{oooEntry.user.email}}", "title": "{{title}}"}'
    assert create(api_client, key, template, ("OOO_CREATED", "BOOKING_CREATED")).status_code == 200


@pytest.mark.parametrize(
    ("template", "triggers", "unknown"),
    [
        ('{"x": "{{oooEntry.nickname}}"}', ("OOO_CREATED",), "oooEntry.nickname"),
        ('{"x": "{{oooEntry.user.email}}"}', ("BOOKING_CREATED",), "oooEntry.user.email"),
    ],
)
def test_an_unknown_variable_for_the_triggers_is_a_400_and_creates_nothing(api_client, template, triggers, unknown):
    key = ApiKeyFactory(user=UserFactory())
    response = create(api_client, key, template, triggers)
    assert response.status_code == 400
    [message] = response.json()["errors"]["payloadTemplate"]
    assert unknown in message.split(". Valid")[0]
    if "OOO_CREATED" in triggers:
        assert "oooEntry.user.email" in message and "oooEntry.toUser.timeZone" in message
    assert not Webhook.objects.exists()
