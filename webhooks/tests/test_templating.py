"""payloadTemplate: JSON-aware rendering, Cal.com's variables, and validation (docs/webhooks.md)."""

import json

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from webhooks.delivery import attempt_delivery
from webhooks.models import Webhook, WebhookTrigger
from webhooks.outbox import emit_event
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


def render_sample(template: str, trigger: str = "BOOKING_CREATED"):
    return render(template, trigger_event=trigger, created_at="2026-11-20T09:00:00Z", payload=sample_payload(trigger))


def test_cal_coms_documented_example_template_renders_as_cal_com_renders_it():
    template = (
        '{"content": "A new event has been scheduled", "type": "{{type}}", "name": "{{title}}",'
        ' "organizer": "{{organizer.name}}", "booker": "{{attendees.0.name}}"}'
    )
    assert json.loads(render_sample(template).body) == {
        "content": "A new event has been scheduled",
        "type": "30min",
        "name": "30 min between Ada Lovelace and Grace Hopper",
        "organizer": "Ada Lovelace",
        "booker": "Grace Hopper",
    }


def test_every_documented_variable_and_payload_key_renders():
    template = (
        '{"t": "{{triggerEvent}}", "at": "{{createdAt}}", "start": "{{startTime}}", "end": "{{endTime}}",'
        ' "where": "{{location}}", "uid": "{{uid}}", "id": "{{eventTypeId}}", "url": "{{bookerUrl}}",'
        ' "tz": "{{organizer.timeZone}}", "locale": "{{attendees.0.language.locale}}",'
        ' "answer": "{{responses.name.value}}", "custom": "{{userFieldsResponses.company.value}}",'
        ' "video": "{{metadata.videoCallUrl}}", "offset": "{{organizer.utcOffset}}"}'
    )
    assert json.loads(render_sample(template).body) == {
        "t": "BOOKING_CREATED",
        "at": "2026-11-20T09:00:00Z",
        "start": "2026-11-20T09:00:00Z",
        "end": "2026-11-20T09:30:00Z",
        "where": "https://meet.example.com/sample",
        "uid": "sample-booking-uid",
        "id": 1,
        "url": "http://localhost:8000",
        "tz": "Europe/London",
        "locale": "en",
        "answer": "Grace Hopper",
        "custom": "Navy",
        "video": "https://meet.example.com/sample",
        "offset": 0,
    }


def test_a_known_variable_without_a_value_in_this_event_renders_empty():
    template = (
        '{"why": "{{cancellationReason}}", "text": "Reason: {{cancellationReason}}.", "team": "{{team.name}}",'
        ' "rejected": "{{rejectionReason}}", "second": "{{attendees.1.email}}", "bare": {{rescheduleUid}}}'
    )
    assert json.loads(render_sample(template).body) == {
        "why": "",
        "text": "Reason: .",
        "team": "",
        "rejected": "",
        "second": "",
        "bare": "",
    }
    plain = render_sample("Cancelled ({{cancellationReason}}) by {{organizer.name}}")
    assert plain.body.decode() == "Cancelled () by Ada Lovelace"
    cancelled = render_sample('{"why": "{{cancellationReason}}"}', trigger="BOOKING_CANCELLED")
    assert json.loads(cancelled.body) == {"why": "A sample reason"}


@pytest.mark.parametrize(
    ("template", "triggers"),
    [
        ('{"t": "{{team.name}}", "m": "{{team.members}}", "r": "{{rejectionReason}}"}', ["BOOKING_CREATED"]),
        ('{"tz": "{{organizer.timezone}}", "l": "{{attendees.0.language.locale}}"}', ["BOOKING_CREATED"]),
        ('{"why": "{{cancellationReason}}", "old": "{{rescheduleUid}}"}', ["BOOKING_CREATED"]),
        ('{"field": "{{responses.favouriteColour.value}}", "m": "{{metadata.crmId}}"}', ["BOOKING_CREATED"]),
        ('{"p": "{{paymentId}}", "n": "{{smsReminderNumber}}"}', ["BOOKING_CREATED", "BOOKING_PAID"]),
        ('{"id": "{{id}}", "who": "{{user.email}}", "from": "{{fromReschedule}}"}', ["MEETING_ENDED"]),
    ],
)
def test_documented_variables_and_payload_keys_are_accepted(api_client, template, triggers):
    key = ApiKeyFactory(user=UserFactory())
    response = api_client.post(
        "/v1/webhooks",
        {"subscriberUrl": "http://127.0.0.1:9/x", "eventTriggers": triggers, "payloadTemplate": template},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {key.raw_key}",
    )
    assert response.status_code == 200, response.content
    assert Webhook.objects.get().payload_template == template


def test_unknown_variable_on_update_is_400_and_the_webhook_is_unchanged(api_client):
    key = ApiKeyFactory(user=UserFactory())
    webhook = WebhookFactory(user=key.user, payload_template='{"t": "{{title}}"}')
    response = api_client.patch(
        f"/v1/webhooks/{webhook.pk}",
        {"payloadTemplate": '{"t": "{{title}}", "p": "{{paymentId}}", "x": "{{organizer.nickname}}"}'},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {key.raw_key}",
    )
    assert response.status_code == 400
    [message] = response.json()["errors"]["payloadTemplate"]
    assert "organizer.nickname" in message and "paymentId" in message.split(". Valid")[0]
    assert "bookerUrl" in message and "responses.name.value" in message
    webhook.refresh_from_db()
    assert webhook.payload_template == '{"t": "{{title}}"}'
