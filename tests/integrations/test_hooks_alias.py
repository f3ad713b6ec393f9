"""`/hooks` (and `/v1/hooks`) is `/webhooks` under its older name: every method and sub-path, the
same envelopes, status codes, errors and visibility. Cal.com's API v1 rewrote `/api/hooks/*` to
`/api/webhooks/*` (apps/api/v1/next.config.js) and integrations still call it."""

import hashlib
import hmac

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from tests.support.credentials import auth
from tests.support.problems import assert_problem
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

PREFIXES = ["/hooks", "/v1/hooks"]
URL = "http://127.0.0.1:8765/n8n/webhook"


def api_key_query(user) -> str:
    return f"apiKey={ApiKeyFactory(user=user).raw_key}"


@pytest.mark.parametrize("prefix", PREFIXES)
def test_create_through_the_alias_answers_200_with_location_under_the_alias(api_client, prefix):
    user = UserFactory()
    response = api_client.post(
        f"{prefix}?{api_key_query(user)}",
        {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"], "active": True},
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Webhook created successfully"
    webhook = Webhook.objects.get(pk=body["webhook"]["id"])
    assert response["Location"] == f"http://testserver{prefix}/{webhook.pk}"
    assert (webhook.user_id, webhook.subscriber_url, webhook.event_triggers) == (user.pk, URL, ["BOOKING_CREATED"])
    assert body["webhook"]["secret"] == webhook.secret


@pytest.mark.parametrize("prefix", PREFIXES)
def test_list_get_patch_and_delete_through_the_alias(api_client, prefix):
    user = UserFactory()
    webhook = WebhookFactory(user=user, subscriber_url=URL)
    WebhookFactory()  # someone else's: never listed
    query = api_key_query(user)

    listed = api_client.get(f"{prefix}?{query}")
    assert listed.status_code == 200
    assert [row["id"] for row in listed.json()["webhooks"]] == [str(webhook.pk)]
    assert listed.json()["pagination"] == {
        "page": 1,
        "take": 100,
        "total": 1,
        "totalIsExact": True,
        "hasNextPage": False,
        "nextCursor": None,
    }

    fetched = api_client.get(f"{prefix}/{webhook.pk}?{query}")
    assert fetched.status_code == 200
    assert fetched.json()["webhook"]["subscriberUrl"] == URL
    assert fetched.json()["webhook"]["secret"] is None

    patched = api_client.patch(
        f"{prefix}/{webhook.pk}?{query}", {"active": False, "eventTriggers": ["BOOKING_CANCELLED"]}, format="json"
    )
    assert patched.status_code == 200
    assert patched.json()["webhook"]["active"] is False
    webhook.refresh_from_db()
    assert (webhook.active, webhook.event_triggers) == (False, ["BOOKING_CANCELLED"])

    deleted = api_client.delete(f"{prefix}/{webhook.pk}?{query}")
    assert deleted.status_code == 200
    assert deleted.json() == {"message": f"Webhook with id: {webhook.pk} deleted successfully"}
    assert not Webhook.objects.filter(pk=webhook.pk).exists()


@pytest.mark.parametrize("prefix", PREFIXES)
def test_test_send_and_the_delivery_log_through_the_alias(api_client, receiver, prefix):
    webhook = WebhookFactory(subscriber_url=receiver.url(), secret="n8n-style hex secret")
    headers = auth(webhook.user, "WRITE_WEBHOOK")

    sent = api_client.post(f"{prefix}/{webhook.pk}/test", **headers)
    assert sent.status_code == 200
    assert sent.json()["attempt"]["responseStatus"] == 200
    [request] = receiver.requests
    expected = hmac.new(b"n8n-style hex secret", request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Cal-Signature-256"] == expected
    delivery_id = sent.json()["delivery"]["id"]

    listed = api_client.get(f"{prefix}/{webhook.pk}/deliveries?status=succeeded", **headers)
    assert listed.status_code == 200
    assert [row["id"] for row in listed.json()["deliveries"]] == [delivery_id]

    detail = api_client.get(f"{prefix}/{webhook.pk}/deliveries/{delivery_id}", **headers)
    assert detail.status_code == 200
    assert [attempt["responseStatus"] for attempt in detail.json()["delivery"]["attempts"]] == [200]

    redelivered = api_client.post(f"{prefix}/{webhook.pk}/deliveries/{delivery_id}/redeliver", **headers)
    assert redelivered.status_code == 202
    assert WebhookDelivery.objects.get(pk=delivery_id).status == DeliveryStatus.PENDING


@pytest.mark.parametrize("prefix", PREFIXES)
def test_rotate_secret_through_the_alias_shows_the_new_secret_once(api_client, prefix):
    webhook = WebhookFactory()
    old_secret = webhook.secret

    response = api_client.post(f"{prefix}/{webhook.pk}/rotate-secret", **auth(webhook.user))

    assert response.status_code == 200
    webhook.refresh_from_db()
    assert webhook.secret != old_secret and webhook.previous_secret == old_secret
    assert response.json()["webhook"]["secret"] == webhook.secret
    assert api_client.get(f"{prefix}/{webhook.pk}", **auth(webhook.user)).json()["webhook"]["secret"] is None


@pytest.mark.parametrize("prefix", PREFIXES)
def test_unknown_field_through_the_alias_is_400_and_writes_nothing(api_client, prefix):
    user = UserFactory()
    response = api_client.post(
        f"{prefix}?{api_key_query(user)}",
        {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"], "colour": "red"},
        format="json",
    )

    body = assert_problem(response, 400, "validation_error")
    assert "colour" in body["errors"]
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("prefix", PREFIXES)
def test_someone_elses_webhook_through_the_alias_is_404_and_unchanged(api_client, prefix):
    theirs = WebhookFactory(active=True)
    query = api_key_query(UserFactory())

    assert_problem(api_client.get(f"{prefix}/{theirs.pk}?{query}"), 404, "not_found")
    patched = api_client.patch(f"{prefix}/{theirs.pk}?{query}", {"active": False}, format="json")
    assert_problem(patched, 404, "not_found")
    assert_problem(api_client.delete(f"{prefix}/{theirs.pk}?{query}"), 404, "not_found")
    assert_problem(api_client.post(f"{prefix}/{theirs.pk}/rotate-secret?{query}"), 404, "not_found")
    theirs.refresh_from_db()
    assert theirs.active is True and theirs.previous_secret == ""


@pytest.mark.parametrize("prefix", PREFIXES)
def test_alias_keeps_scopes_and_authentication(api_client, prefix):
    user = UserFactory()
    body = {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"]}

    assert_problem(api_client.get(prefix), 401, "not_authenticated")
    refused = api_client.post(prefix, body, format="json", **auth(user, "READ_WEBHOOK"))
    assert_problem(refused, 403, "insufficient_scope")
    assert 'scope="WRITE_WEBHOOK"' in refused["WWW-Authenticate"]
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("prefix", PREFIXES)
def test_put_through_the_alias_is_405(api_client, prefix):
    webhook = WebhookFactory()
    response = api_client.put(f"{prefix}/{webhook.pk}", {"active": False}, format="json", **auth(webhook.user))
    assert_problem(response, 405, "method_not_allowed")
    webhook.refresh_from_db()
    assert webhook.active is True


def test_openapi_document_names_the_alias_once_without_listing_its_operations(api_client):
    document = api_client.get("/v1/openapi.json").json()

    assert "/v1/webhooks" in document["paths"] and "/v1/webhooks/{id}/rotate-secret" in document["paths"]
    assert not [path for path in document["paths"] if "hooks" in path and "webhooks" not in path]
    assert "/v1/hooks" in document["info"]["description"]


def test_the_same_webhook_reads_identically_through_both_names(api_client):
    user = UserFactory()
    headers = auth(user)
    created = api_client.post(
        "/hooks", {"subscriberUrl": URL, "eventTriggers": [WebhookTrigger.MEETING_ENDED]}, format="json", **headers
    ).json()["webhook"]

    through_webhooks = api_client.get(f"/v1/webhooks/{created['id']}", **headers).json()["webhook"]
    assert through_webhooks == api_client.get(f"/v1/hooks/{created['id']}", **headers).json()["webhook"]
