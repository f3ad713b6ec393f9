"""The SSRF rule (docs/webhooks.md, "Which URLs are accepted"): at create/update time and again at send time."""

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from webhooks.delivery import attempt_delivery
from webhooks.models import DeliveryStatus, Webhook, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.ssrf import BlockedTarget, resolve_target

pytestmark = pytest.mark.django_db


def create(api_client, url):
    key = ApiKeyFactory(user=UserFactory())
    return api_client.post(
        "/v1/webhooks",
        {"subscriberUrl": url, "eventTriggers": ["BOOKING_CREATED"]},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {key.raw_key}",
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/hook", "loopback"),
        ("http://localhost:8000/hook", "loopback"),
        ("http://[::1]/hook", "loopback"),
        ("http://10.1.2.3/hook", "private"),
        ("http://172.16.5.4/hook", "private"),
        ("https://192.168.1.1/hook", "private"),
        ("http://[fd12:3456::1]/hook", "private"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://169.254.10.10/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[ff02::1]/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://100.64.0.1/", "non-public"),
        ("http://[::ffff:127.0.0.1]/hook", "::ffff:127.0.0.1, a loopback address (IPv4-mapped)"),
        ("http://[::ffff:169.254.169.254]/", "metadata"),
        ("http://2130706433/hook", "loopback"),
        ("http://0177.0.0.1/hook", "loopback"),
        ("http://0x7f.0.0.1/hook", "loopback"),
        ("http://127.1/hook", "loopback"),
        ("http://017700000001/hook", "loopback"),
        ("http://192.0.0.8/hook", "non-public"),
        ("http://192.88.99.1/hook", "non-public"),
        ("http://[64:ff9b::7f00:1]/hook", "loopback address (IPv4-mapped)"),
        ("http://[64:ff9b::a9fe:a9fe]/hook", "metadata"),
        ("http://[2002:7f00:1::]/hook", "loopback address (IPv4-mapped)"),
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", "loopback address (IPv4-mapped)"),
    ],
)
def test_internal_addresses_are_refused_at_create_with_the_reason(api_client, no_allowed_cidrs, url, reason):
    response = create(api_client, url)
    assert response.status_code == 400
    message = response.json()["errors"]["subscriberUrl"][0]
    assert reason in message
    assert not Webhook.objects.exists()


def test_host_resolving_to_a_private_address_is_refused(api_client, no_allowed_cidrs, fake_dns):
    fake_dns["intranet.example.test"] = ["93.184.216.34", "10.0.0.7"]
    response = create(api_client, "https://intranet.example.test/hook")
    assert response.status_code == 400
    assert "10.0.0.7, a private address" in response.json()["errors"]["subscriberUrl"][0]


def test_unresolvable_host_is_refused(api_client, no_allowed_cidrs, fake_dns):
    response = create(api_client, "https://nowhere.example.test/hook")
    assert response.status_code == 400
    assert "could not be resolved" in response.json()["errors"]["subscriberUrl"][0]


def test_public_address_is_accepted(api_client, no_allowed_cidrs, fake_dns):
    fake_dns["hooks.example.test"] = ["93.184.216.34"]
    assert create(api_client, "https://hooks.example.test/hook").status_code == 200
    assert create(api_client, "http://93.184.216.34:8080/hook").status_code == 200


def test_allow_listed_range_is_accepted(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_CIDRS": ["10.20.0.0/16"]}
    assert resolve_target("http://10.20.1.2/x").address == "10.20.1.2"
    with pytest.raises(BlockedTarget):
        resolve_target("http://10.21.1.2/x")


def test_host_that_rebinds_to_loopback_after_create_is_blocked_at_send_time(
    api_client, no_allowed_cidrs, fake_dns, receiver
):
    fake_dns["rebind.example.test"] = ["93.184.216.34"]
    response = create(api_client, f"http://rebind.example.test:{receiver.port}/hook")
    assert response.status_code == 200
    webhook = Webhook.objects.get()

    fake_dns["rebind.example.test"] = ["127.0.0.1"]
    [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=webhook.user)
    attempt = attempt_delivery(delivery_id=delivery.pk)

    assert attempt.error_class == "blocked"
    assert "127.0.0.1, a loopback address" in attempt.error_message
    assert attempt.response_status is None
    assert receiver.requests == []
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING and delivery.retry_index == 1


def test_send_connects_to_the_checked_address_and_keeps_the_host_name(fake_dns, receiver):
    from webhooks.tests.factories import WebhookFactory

    fake_dns["hooks.example.test"] = ["127.0.0.1"]
    webhook = WebhookFactory(subscriber_url=f"http://hooks.example.test:{receiver.port}/in?x=1")
    [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=webhook.user)

    attempt = attempt_delivery(delivery_id=delivery.pk)

    assert attempt.response_status == 200
    [request] = receiver.requests
    assert request.headers["Host"] == f"hooks.example.test:{receiver.port}"
    assert request.path == "/in?x=1"
