"""payloadTemplate (contract §5.3): JSON-aware rendering and validation."""

import json

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from webhooks.delivery import attempt_delivery
from webhooks.events import emit_event
from webhooks.models import Webhook, WebhookTrigger
from webhooks.samples import sample_payload
from webhooks.templating import render
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

PAYLOAD = {
    **sample_payload(),
    "title": 'Say "hi"\nand bye \\ ok',
    "price": 2500,
    "organizer": {"id": 7, "name": 'Ann "The Boss" Lee', "email": "ann@example.com"},
    "attendees": [{"name": "Bob\nNewline", "email": "bob@example.com"}],
    "cancellationReason": None,
}


def render_json(template: str):
    rendered = render(template, trigger_event="BOOKING_CREATED", created_at="2026-11-20T09:00:00Z", payload=PAYLOAD)
    assert rendered.content_type == "application/json"
    return json.loads(rendered.body)


def test_exact_variable_string_is_replaced_by_the_typed_value():
    body = render_json(
        '{"price": "{{price}}", "who": "{{organizer}}", "people": "{{attendees}}", "why": "{{cancellationReason}}"}'
    )
    assert body == {
        "price": 2500,
        "who": PAYLOAD["organizer"],
        "people": PAYLOAD["attendees"],
        "why": None,
    }


def test_variables_inside_longer_strings_are_json_escaped_text():
    body = render_json('{"text": "{{organizer.name}} booked {{title}} with {{attendees.0.name}} for {{price}}"}')
    assert body["text"] == f"{PAYLOAD['organizer']['name']} booked {PAYLOAD['title']} with Bob\nNewline for 2500"


def test_bare_variable_outside_strings_becomes_json_and_trigger_and_created_at_resolve():
    body = render_json('{"event": "{{triggerEvent}}", "at": "{{ createdAt }}", "n": {{price}}, "org": {{organizer}}}')
    assert body == {"event": "BOOKING_CREATED", "at": "2026-11-20T09:00:00Z", "n": 2500, "org": PAYLOAD["organizer"]}


def test_non_json_template_is_plain_text():
    rendered = render(
        "New booking: {{title}} ({{attendees.0.email}})", trigger_event="X", created_at="", payload=PAYLOAD
    )
    assert rendered.content_type == "text/plain; charset=utf-8"
    assert rendered.body.decode() == f"New booking: {PAYLOAD['title']} (bob@example.com)"


def test_empty_template_is_the_default_envelope():
    body = render_json("  ")
    assert body == {"triggerEvent": "BOOKING_CREATED", "createdAt": "2026-11-20T09:00:00Z", "payload": PAYLOAD}


def create(api_client, template):
    key = ApiKeyFactory(user=UserFactory())
    return api_client.post(
        "/v1/webhooks",
        {"subscriberUrl": "http://127.0.0.1:9/x", "eventTriggers": ["BOOKING_CREATED"], "payloadTemplate": template},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {key.raw_key}",
    )


def test_unknown_variable_is_400_listing_the_valid_ones(api_client):
    response = create(api_client, '{"who": "{{organiser.name}}", "t": "{{title}}"}')
    assert response.status_code == 400
    [message] = response.json()["errors"]["payloadTemplate"]
    assert "organiser.name" in message
    for valid in ("organizer.name", "attendees.0.email", "title", "triggerEvent", "createdAt", "startTime"):
        assert valid in message
    assert not Webhook.objects.exists()


def test_template_that_cannot_render_to_json_is_400(api_client):
    response = create(api_client, '{"title": {{title}} "oops"}')
    assert response.status_code == 400
    assert "valid JSON" in response.json()["errors"]["payloadTemplate"][0]
    assert not Webhook.objects.exists()


def test_valid_template_is_accepted_and_returned(api_client):
    template = '{"content": "{{organizer.name}} booked {{title}}", "start": "{{startTime}}"}'
    response = create(api_client, template)
    assert response.status_code == 200
    assert response.json()["webhook"]["payloadTemplate"] == template


def test_delivery_with_template_sends_escaped_json_whatever_the_names(receiver):
    template = '{"text": "{{attendees.0.name}} booked", "price": "{{price}}"}'
    webhook = WebhookFactory(subscriber_url=receiver.url(), payload_template=template)
    [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload=PAYLOAD, user=webhook.user)

    attempt = attempt_delivery(delivery_id=delivery.pk)

    assert attempt.response_status == 200
    [request] = receiver.requests
    assert request.headers["Content-Type"] == "application/json"
    assert request.json() == {"text": "Bob\nNewline booked", "price": 2500}
