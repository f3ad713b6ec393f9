"""Cal.com's hosted API refused `http://` subscriber URLs (calcom/cal.com,
apps/api/v1/test/lib/webhooks/_post.test.ts and validations/webhook.test.ts); here https is the
production default and the operator may allow http (`WEBHOOK_ALLOW_HTTP`, on with DEBUG)."""

import pytest

from accounts.tests.factories import ApiKeyFactory
from webhooks.models import Webhook
from webhooks.ssrf import BlockedTarget, resolve_target

pytestmark = pytest.mark.django_db


@pytest.fixture
def https_only(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_HTTP": False}


def create(api_client, url: str):
    body = {"subscriberUrl": url, "eventTriggers": ["BOOKING_CREATED"]}
    return api_client.post("/v1/webhooks", body, format="json", HTTP_AUTHORIZATION=f"Bearer {ApiKeyFactory().raw_key}")


@pytest.mark.usefixtures("https_only")
@pytest.mark.parametrize("url", ["http://127.0.0.1:8765/hook", "HTTP://127.0.0.1/hook"])
def test_http_subscriber_url_is_a_400_naming_it_and_creates_nothing(api_client, url):
    response = create(api_client, url)
    assert response.status_code == 400
    assert "https" in response.json()["errors"]["subscriberUrl"][0]
    assert not Webhook.objects.exists()


@pytest.mark.usefixtures("https_only")
def test_https_subscriber_url_is_accepted(api_client):
    response = create(api_client, "https://127.0.0.1:8765/hook")
    assert response.status_code == 200, response.json()


@pytest.mark.usefixtures("https_only")
def test_an_http_webhook_kept_from_before_is_refused_when_sending():
    with pytest.raises(BlockedTarget, match="https"):
        resolve_target("http://127.0.0.1:8765/hook")


def test_http_is_accepted_when_the_operator_allows_it(api_client):
    response = create(api_client, "http://127.0.0.1:8765/hook")
    assert response.status_code == 200, response.json()
