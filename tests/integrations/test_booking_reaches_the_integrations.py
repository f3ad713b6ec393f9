"""One booking, end to end, as the integrations see it: each subscribed through `/hooks` the way it
does, a slot found and booked with a v1 body, and a real Celery worker delivering the event to a
real HTTP receiver, where each integration's own handling of the request is replayed."""

import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.live_services import wait_until
from webhooks.models import DeliveryStatus, WebhookDelivery

pytestmark = pytest.mark.django_db(transaction=True)


# n8n/packages/nodes-base/nodes/Cal/v1/CalTriggerV1.node.ts (create with its own secret, then
# webhook(): the X-Cal-Signature-256 check and the item it builds), pipedream/components/cal_com/
# sources/common/common.mjs (activate, then run(): meta from payload.uid, payload.title and
# Date.parse(createdAt)) and activepieces/packages/pieces/cal-com/src/lib/triggers/register-webhook.ts
# (onEnable, then run(): the body as is), all on one user's bookings.
def test_a_booking_reaches_n8n_pipedream_and_activepieces_subscriptions(api_client, receiver, start_worker):
    start_worker()
    user = UserFactory()
    event_type = EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"), title="Intro")
    query = f"apiKey={ApiKeyFactory(user=user).raw_key}"
    n8n_secret = secrets.token_hex(32)
    subscriptions = {
        "n8n": ("/hooks", {"secret": n8n_secret}),
        "pipedream": ("/v1/hooks", {}),
        "activepieces": ("/v1/hooks", {}),
    }
    for name, (path, extra) in subscriptions.items():
        body = {"subscriberUrl": receiver.url(f"/{name}"), "eventTriggers": ["BOOKING_CREATED"], "active": True}
        created = api_client.post(f"{path}?{query}", json.dumps({**body, **extra}), content_type="application/json")
        assert created.status_code == 200, created.content

    day = (timezone.now() + timedelta(days=7)).date()
    slots = api_client.get(
        f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day + timedelta(days=4)}&{query}"
    ).json()["slots"]
    start = next(iter(slots.values()))[0]["time"]
    booking_body = {
        "eventTypeId": event_type.pk,
        "start": start,
        "responses": {"name": "Ada Lovelace", "email": "ada@example.org"},
        "timeZone": "Europe/London",
        "language": "en",
        "metadata": {},
    }
    booked = api_client.post(f"/v1/bookings?{query}", json.dumps(booking_body), content_type="application/json")
    assert booked.status_code == 200, booked.content

    requests = {request.path.lstrip("/"): request for request in receiver.wait_for(3)}
    assert set(requests) == set(subscriptions)
    wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 3,
        what="three deliveries to succeed",
    )

    n8n = requests["n8n"]
    expected = hmac.new(n8n_secret.encode(), n8n.body, hashlib.sha256).hexdigest()
    assert n8n.headers["X-Cal-Signature-256"] == expected
    envelope = json.loads(n8n.body)
    item = {"triggerEvent": envelope["triggerEvent"], "createdAt": envelope["createdAt"], **envelope["payload"]}
    assert item["triggerEvent"] == "BOOKING_CREATED"
    assert datetime.fromisoformat(item["startTime"].replace("Z", "+00:00")) == datetime.fromisoformat(
        start.replace("Z", "+00:00")
    )
    assert item["attendees"][0]["email"] == "ada@example.org"

    pipedream = json.loads(requests["pipedream"].body)
    meta = {"id": pipedream["payload"]["uid"], "summary": pipedream["payload"]["title"]}
    assert isinstance(meta["id"], str) and meta["id"]
    assert isinstance(meta["summary"], str) and meta["summary"]
    assert datetime.fromisoformat(pipedream["createdAt"].replace("Z", "+00:00")) <= datetime.now(UTC)

    activepieces_output = json.loads(requests["activepieces"].body)
    assert activepieces_output["triggerEvent"] == "BOOKING_CREATED"
    assert activepieces_output["payload"]["uid"] == meta["id"]
