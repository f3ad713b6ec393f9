"""Webhooks CRUD (docs/webhooks.md, Managing webhooks): ownership, secrets, triggers, duplicates, scopes, visibility."""

import pytest

from accounts.models import MembershipRole
from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import auth
from webhooks.models import Webhook, WebhookScheduledTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

URL = "http://127.0.0.1:8765/hook"


def create(api_client, user, **body):
    body = {"subscriberUrl": URL, "eventTriggers": ["BOOKING_CREATED"], **body}
    return api_client.post("/v1/webhooks", body, format="json", **auth(user))


def test_create_returns_200_with_generated_whsec_secret_once(api_client):
    user = UserFactory()
    response = create(api_client, user, eventTriggers=["BOOKING_CREATED", "BOOKING_CANCELLED", "BOOKING_CREATED"])

    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Webhook created successfully"
    webhook = body["webhook"]
    assert response["Location"].endswith(f"/v1/webhooks/{webhook['id']}")
    assert webhook["secret"].startswith("whsec_") and len(webhook["secret"]) == 6 + 44
    assert webhook["hasSecret"] is True
    assert webhook["eventTriggers"] == ["BOOKING_CREATED", "BOOKING_CANCELLED"]
    assert webhook["userId"] == user.pk and webhook["user"]["id"] == user.pk
    assert webhook["teamId"] is None and webhook["eventTypeId"] is None
    assert webhook["platformOAuthClientId"] is None and webhook["platform"] is False
    assert webhook["payloadTemplate"] is None
    assert webhook["active"] is True
    assert webhook["scheduledTriggers"] == []
    assert webhook["createdAt"].endswith("Z")
    assert Webhook.objects.get(pk=webhook["id"]).secret == webhook["secret"]

    fetched = api_client.get(f"/v1/webhooks/{webhook['id']}", **auth(user))
    assert fetched.status_code == 200
    assert fetched.json()["webhook"]["secret"] is None
    assert fetched.json()["webhook"]["hasSecret"] is True


def test_create_with_an_oauth_token_keeps_the_client_secret(api_client):
    user = UserFactory()
    response = api_client.post(
        "/webhooks",
        {"subscriberUrl": URL, "eventTriggers": ["BOOKING_PAID"], "secret": "my own secret", "active": False},
        format="json",
        **auth(user, scope="WRITE_WEBHOOK"),
    )
    assert response.status_code == 200
    assert response.json()["webhook"]["secret"] == "my own secret"
    assert response.json()["webhook"]["active"] is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"eventTriggers": []}, "eventTriggers"),
        ({"eventTriggers": ["BOOKING_EXPLODED"]}, "eventTriggers"),
        ({"subscriberUrl": "ftp://127.0.0.1/x"}, "subscriberUrl"),
        ({"subscriberUrl": "http://user:pw@127.0.0.1/x"}, "subscriberUrl"),
        ({"id": "0b7b5f4e-8f7c-4b4e-9a39-3b1c2a1d9e11"}, "id"),
        ({"colour": "red"}, "colour"),
        ({"secret": "whsec_***not base64***"}, "secret"),
        ({"payloadTemplate": '{"who": "{{nobody}}"}'}, "payloadTemplate"),
        ({"teamId": 1, "eventTypeId": 1}, "eventTypeId"),
    ],
)
def test_bad_create_input_is_400_naming_the_field_and_writes_nothing(api_client, body, field):
    response = create(api_client, UserFactory(), **body)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["errors"]
    assert not Webhook.objects.exists()


def test_same_owner_and_url_twice_is_409(api_client):
    user = UserFactory()
    assert create(api_client, user).status_code == 200
    response = create(api_client, user, eventTriggers=["BOOKING_PAID"])
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert Webhook.objects.count() == 1
    assert create(api_client, UserFactory()).status_code == 200  # another owner may use the URL


def test_event_type_webhook_for_own_event_type_and_400_for_someone_elses(api_client):
    user = UserFactory()
    own = EventTypeFactory(owner=user)
    response = create(api_client, user, eventTypeId=own.pk)
    assert response.status_code == 200
    assert response.json()["webhook"]["eventTypeId"] == own.pk
    assert response.json()["webhook"]["eventType"] == {
        "id": own.pk,
        "title": own.title,
        "slug": own.slug,
        "length": own.length,
    }

    someone_elses = EventTypeFactory()
    response = create(api_client, user, eventTypeId=someone_elses.pk, subscriberUrl=URL + "2")
    assert response.status_code == 400
    assert response.json()["errors"]["eventTypeId"] == [f"Event type {someone_elses.pk} does not exist."]
    assert Webhook.objects.count() == 1


def test_team_webhooks_need_team_admin(api_client):
    admin, member = UserFactory(), UserFactory()
    team = TeamFactory()
    MembershipFactory(user=admin, team=team, role=MembershipRole.ADMIN)
    MembershipFactory(user=member, team=team, role=MembershipRole.MEMBER)
    team_type = EventTypeFactory(owner=None, team=team, schedule=None)

    assert create(api_client, admin, teamId=team.pk).status_code == 200
    assert create(api_client, admin, eventTypeId=team_type.pk).status_code == 200
    assert create(api_client, member, teamId=team.pk, subscriberUrl=URL + "m").status_code == 403
    assert create(api_client, member, eventTypeId=team_type.pk, subscriberUrl=URL + "m").status_code == 403
    assert create(api_client, UserFactory(), teamId=team.pk, subscriberUrl=URL + "x").status_code == 400
    assert Webhook.objects.count() == 2

    listed = api_client.get("/v1/webhooks", **auth(admin)).json()["webhooks"]
    assert len(listed) == 2
    assert api_client.get("/v1/webhooks", **auth(member)).json()["webhooks"] == []


def test_user_id_and_platform_client_are_for_system_admins_only(api_client):
    other = UserFactory()
    response = create(api_client, UserFactory(), userId=other.pk)
    assert response.status_code == 403
    assert not Webhook.objects.exists()

    response = create(api_client, UserFactory(role="ADMIN"), userId=other.pk)
    assert response.status_code == 200
    assert response.json()["webhook"]["userId"] == other.pk


def test_patch_that_sets_the_secret_returns_it_and_other_patches_do_not(api_client):
    webhook = WebhookFactory()
    headers = auth(webhook.user)
    response = api_client.patch(f"/v1/webhooks/{webhook.pk}", {"secret": "new secret"}, format="json", **headers)
    assert response.status_code == 200
    assert response.json()["webhook"]["secret"] == "new secret"

    response = api_client.patch(
        f"/v1/webhooks/{webhook.pk}", {"eventTriggers": ["BOOKING_PAID"]}, format="json", **headers
    )
    assert response.status_code == 200
    assert response.json()["webhook"]["secret"] is None
    assert response.json()["webhook"]["eventTriggers"] == ["BOOKING_PAID"]

    response = api_client.patch(f"/v1/webhooks/{webhook.pk}", {"secret": None}, format="json", **headers)
    assert response.json()["webhook"]["hasSecret"] is False


def test_patch_with_bad_url_changes_nothing(api_client, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_CIDRS": []}
    webhook = WebhookFactory(subscriber_url="http://93.184.216.34/hook")
    response = api_client.patch(
        f"/v1/webhooks/{webhook.pk}",
        {"subscriberUrl": "http://10.0.0.1/x", "active": False},
        format="json",
        **auth(webhook.user),
    )
    assert response.status_code == 400
    assert "private" in response.json()["errors"]["subscriberUrl"][0]
    webhook.refresh_from_db()
    assert webhook.subscriber_url == "http://93.184.216.34/hook" and webhook.active


def test_delete_webhook(api_client):
    webhook = WebhookFactory()
    response = api_client.delete(f"/v1/webhooks/{webhook.pk}", **auth(webhook.user))
    assert response.status_code == 200
    assert response.json() == {"message": f"Webhook with id: {webhook.pk} deleted successfully"}
    assert not Webhook.objects.exists()


def test_subscribing_to_meeting_triggers_schedules_upcoming_bookings(api_client):
    webhook = WebhookFactory()
    booking = BookingFactory(organizer=webhook.user)
    response = api_client.patch(
        f"/v1/webhooks/{webhook.pk}",
        {"eventTriggers": ["BOOKING_CREATED", "MEETING_STARTED"]},
        format="json",
        **auth(webhook.user),
    )
    assert response.status_code == 200
    [scheduled] = response.json()["webhook"]["scheduledTriggers"]
    assert scheduled["triggerEvent"] == "MEETING_STARTED"
    assert scheduled["bookingId"] == booking.pk
    assert scheduled["startAfter"] == booking.start_time.strftime("%Y-%m-%dT%H:%M:%SZ")

    api_client.patch(
        f"/v1/webhooks/{webhook.pk}", {"eventTriggers": ["BOOKING_CREATED"]}, format="json", **auth(webhook.user)
    )
    assert not WebhookScheduledTrigger.objects.exists()


def test_read_scope_cannot_write_and_no_credentials_is_401(api_client):
    webhook = WebhookFactory()
    read = auth(webhook.user, scope="READ_WEBHOOK")
    assert api_client.get("/v1/webhooks", **read).status_code == 200
    response = api_client.post(
        "/v1/webhooks", {"subscriberUrl": URL, "eventTriggers": ["BOOKING_PAID"]}, format="json", **read
    )
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert api_client.patch(f"/v1/webhooks/{webhook.pk}", {"active": False}, format="json", **read).status_code == 403
    assert api_client.get("/v1/webhooks", **auth(webhook.user, scope="READ_BOOKING")).status_code == 403
    assert api_client.get("/v1/webhooks").status_code == 401
    webhook.refresh_from_db()
    assert webhook.active and Webhook.objects.count() == 1


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("get", ""),
        ("patch", ""),
        ("delete", ""),
        ("post", "/test"),
        ("post", "/rotate-secret"),
        ("get", "/deliveries"),
    ],
)
def test_someone_elses_webhook_is_404_and_unchanged(api_client, method, suffix):
    webhook = WebhookFactory(subscriber_url="http://127.0.0.1:9/a")
    response = getattr(api_client, method)(
        f"/v1/webhooks/{webhook.pk}{suffix}", {"active": False} if method == "patch" else None, format="json", **auth()
    )
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    webhook.refresh_from_db()
    assert webhook.active and webhook.secret == WebhookFactory._meta.declarations["secret"]
    assert not webhook.deliveries.exists()


def test_list_runs_the_same_number_of_queries_for_1_and_50_webhooks(api_client):
    user = UserFactory()
    headers = auth(user)
    api_client.get("/v1/webhooks", **headers)  # the API key's once-a-minute lastUsedAt write
    WebhookFactory(user=user, event_triggers=["MEETING_STARTED"])
    BookingFactory(organizer=user)

    def count_queries():
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            response = api_client.get("/v1/webhooks", **headers)
        assert response.status_code == 200
        return len(captured), len(response.json()["webhooks"])

    one = count_queries()
    for _ in range(49):
        WebhookFactory(user=user)
    fifty = count_queries()
    assert one[1] == 1 and fifty[1] == 50
    assert one[0] == fifty[0] <= 5
