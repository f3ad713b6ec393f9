"""subscriberUrl is taken exactly as sent, and payloadTemplate is bounded: bad input is a 400
naming the field, and nothing is written."""

import pytest

from accounts.tests.factories import UserFactory
from tests.support.credentials import auth
from tests.support.problems import errors_of, send
from webhooks.models import Webhook
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

URL = "http://127.0.0.1:9/hook"


@pytest.mark.parametrize(
    "url",
    [
        URL + "\r\nX-Injected: 1",
        URL + "\n",
        "http://127.0.0.1:9/ho\tok",
        " " + URL,
        URL + " ",
        "http://127.0.0.1:9/a b",
        "http://127.0.0.1:9/\x7f",
        "http://127.0.0.1:9/\u200bhook",  # zero-width space
        "http://127.0.0.1:9/\u00a0hook",  # no-break space
        "http://127.0.0.1:9/\u2028hook",  # line separator
        "",
    ],
)
def test_subscriber_url_with_whitespace_or_control_characters_is_a_400_and_writes_nothing(client, url):
    user = UserFactory()

    response = send(
        client, "post", "/v1/webhooks", {"subscriberUrl": url, "eventTriggers": ["BOOKING_CREATED"]}, auth(user)
    )

    assert list(errors_of(response)) == ["subscriberUrl"]
    assert not Webhook.objects.exists()


def test_patching_a_subscriber_url_with_a_newline_changes_nothing(client):
    webhook = WebhookFactory(subscriber_url=URL)

    response = send(
        client,
        "patch",
        f"/v1/webhooks/{webhook.pk}",
        {"subscriberUrl": URL + "\r\n", "active": False},
        auth(webhook.user),
    )

    assert list(errors_of(response)) == ["subscriberUrl"]
    webhook.refresh_from_db()
    assert webhook.subscriber_url == URL and webhook.active


def nested_template(depth: int) -> str:
    return '{"a":' * depth + '"{{title}}"' + "}" * depth


@pytest.mark.parametrize("depth", [17, 300, 100_000])
def test_a_deeply_nested_json_template_is_a_400_and_writes_nothing(client, depth):
    user = UserFactory()
    body = {
        "subscriberUrl": URL,
        "eventTriggers": ["BOOKING_CREATED"],
        "payloadTemplate": nested_template(depth)[:65536],
    }

    response = send(client, "post", "/v1/webhooks", body, auth(user))

    assert errors_of(response) == {"payloadTemplate": ["A JSON template may nest at most 16 levels."]}
    assert not Webhook.objects.exists()


def test_a_template_at_the_depth_limit_is_accepted(client):
    user = UserFactory()
    body = {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"], "payloadTemplate": nested_template(16)}

    response = send(client, "post", "/v1/webhooks", body, auth(user))

    assert response.status_code == 200, response.content


def test_a_template_over_the_length_limit_is_a_400(client, settings):
    settings.API_LIMITS = {**settings.API_LIMITS, "WEBHOOK_TEMPLATE_MAX_CHARS": 100}
    user = UserFactory()
    body = {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"], "payloadTemplate": "x" * 101}

    response = send(client, "post", "/v1/webhooks", body, auth(user))

    assert errors_of(response) == {"payloadTemplate": ["Must be at most 100 characters."]}
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("value", [1, "true", "false", 0])
def test_active_is_a_json_boolean(client, value):
    user = UserFactory()
    body = {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"], "active": value}

    assert list(errors_of(send(client, "post", "/v1/webhooks", body, auth(user)))) == ["active"]
    assert not Webhook.objects.exists()
