"""Isolation: user B tries every endpoint on user A's objects and always gets a 404 (or the
403/405 docs/api.md names), never A's data, and nothing changes."""

import pytest
from django.db import connection

from accounts.tests.factories import ApiKeyFactory, MembershipFactory, UserFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

TABLES = [
    "scheduling_schedule",
    "scheduling_availability",
    "scheduling_eventtype",
    "scheduling_booking",
    "accounts_team",
    "accounts_membership",
    "accounts_user",
    "payments_payment",
    "webhooks_webhook",
]


def database_state() -> dict[str, list]:
    with connection.cursor() as cursor:
        state = {}
        for table in TABLES:
            cursor.execute(f"SELECT * FROM {table} ORDER BY 1")
            state[table] = cursor.fetchall()
    return state


def a_schedule(user):
    schedule = ScheduleFactory(user=user, name="A-secret-schedule")
    return f"/v1/schedules/{schedule.pk}", "A-secret-schedule", {"name": "taken over"}


def a_team(user):
    membership = MembershipFactory(user=user, role="OWNER", team__name="A-secret-team", team__slug="a-secret-team")
    return f"/v1/teams/{membership.team_id}", "A-secret-team", {"name": "taken over"}


def a_membership(user):
    membership = MembershipFactory(user=user, role="OWNER", team__name="A-secret-team2", team__slug="a-secret-team2")
    return f"/v1/memberships/{user.pk}_{membership.team_id}", "A-secret-team2", {"role": "MEMBER"}


def a_pending_invitation(user):
    owner = MembershipFactory(role="OWNER", team__name="A-secret-team3", team__slug="a-secret-team3")
    MembershipFactory(user=user, team=owner.team, accepted=False)
    return f"/v1/memberships/{user.pk}_{owner.team_id}", "A-secret-team3", {"accepted": True}


def a_payment(user):
    payment = PaymentFactory(booking=BookingFactory(organizer=user, title="A-secret-booking"), uid="pay_A_secret")
    return f"/v1/payments/{payment.pk}", "pay_A_secret", {"amount": 1}


def a_booking(user):
    booking = BookingFactory(organizer=user, title="A-secret-booking")
    return f"/v1/bookings/{booking.pk}", "A-secret-booking", {"title": "taken over"}


def an_event_type(user):
    event_type = EventTypeFactory(owner=user, title="A-secret-event")
    return f"/v1/event-types/{event_type.pk}", "A-secret-event", {"title": "taken over"}


def a_webhook(user):
    webhook = WebhookFactory(user=user, subscriber_url="http://127.0.0.1:9/A-secret-hook")
    return f"/v1/webhooks/{webhook.pk}", "A-secret-hook", {"active": False}


# (what A owns, the list B reads, what B may get on the object for each method)
CASES = [
    (a_schedule, "/v1/schedules", {"get": 404, "patch": 404, "delete": 404}),
    (a_team, "/v1/teams", {"get": 404, "patch": 404, "delete": 404}),
    (a_membership, "/v1/memberships", {"get": 404, "patch": 404, "delete": 404}),
    (a_pending_invitation, "/v1/memberships", {"get": 404, "patch": 404, "delete": 404}),
    (a_payment, "/v1/payments", {"get": 404, "patch": 405, "delete": 405}),
    (a_booking, "/v1/bookings", {"get": 404, "patch": 404}),
    (an_event_type, "/v1/event-types", {"get": 404, "patch": 404, "delete": 404}),
    (a_webhook, "/v1/webhooks", {"get": 404, "patch": 404, "delete": 404}),
]


@pytest.mark.parametrize("make,list_path,expected", CASES, ids=[case[0].__name__ for case in CASES])
def test_user_b_never_reaches_user_a_objects(api_client, make, list_path, expected):
    user_a, user_b = UserFactory(), UserFactory()
    path, secret, patch_body = make(user_a)
    key_b = ApiKeyFactory(user=user_b).raw_key
    headers = bearer(key_b)
    api_client.get("/v1/me", **headers)  # the key's once-a-minute lastUsedAt write happens now
    before = database_state()

    response = api_client.get(list_path, **headers)
    assert response.status_code == 200
    assert secret not in response.content.decode()
    for method, status in expected.items():
        body = patch_body if method == "patch" else None
        response = getattr(api_client, method)(path, body, format="json", **headers)
        assert response.status_code == status, (method, path, response.content)
        assert response["Content-Type"] == "application/problem+json"
        assert secret not in response.content.decode()
    response = api_client.get(f"{list_path}?userId={user_a.pk}", **headers)
    assert response.status_code == 403
    assert secret not in response.content.decode()

    assert database_state() == before
