"""No back-office page answers 5xx: every registered model's changelist, add page, change page, every
per-object page its admin declares (history, delete, reveal, reset secret, password), the "View on
site" link it offers and every action on its changelist.

The models come from `admin.site._registry`, so a model registered later without a row factory here
fails `test_every_registered_model_has_a_row_factory` instead of going untested.
"""

import pytest
from django.contrib import admin
from django.urls import reverse

from accounts.tests.factories import (
    AccessTokenFactory,
    ApiKeyFactory,
    ApplicationFactory,
    MembershipFactory,
    RefreshTokenFactory,
    TeamFactory,
    UserFactory,
)
from calendars.tests.factories import ExternalCalendarFactory
from notifications.tests.factories import EmailMessageFactory, EventTypeNotificationsFactory, ReminderFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import AttendeeFactory, BookingFactory, EventTypeFactory, ScheduleFactory
from tests.test_admin_site import GrantFactory, IDTokenFactory, OAuthCodeRedemptionFactory, another_app
from webhooks.tests.factories import WebhookFactory, WebhookScheduledTriggerFactory
from webhooks.tests.test_constraints import DeliveryAttemptFactory, WebhookDeliveryFactory

pytestmark = pytest.mark.django_db


def team_with_owner():
    team = TeamFactory()
    MembershipFactory(team=team, role="OWNER")
    return team


def booking_with_attendee():
    booking = BookingFactory()
    AttendeeFactory(booking=booking)
    return booking


def webhook_with_history():
    webhook = WebhookFactory()
    DeliveryAttemptFactory(delivery=WebhookDeliveryFactory(webhook=webhook))
    WebhookScheduledTriggerFactory(webhook=webhook)
    return webhook


def delivery_with_attempt():
    return DeliveryAttemptFactory().delivery


ROW_FACTORIES = {
    "accounts.User": UserFactory,
    "accounts.Team": team_with_owner,
    "accounts.Membership": MembershipFactory,
    "accounts.ApiKey": ApiKeyFactory,
    "accounts.OAuthCodeRedemption": OAuthCodeRedemptionFactory,
    "oauth2_provider.Application": ApplicationFactory,
    "oauth2_provider.AccessToken": AccessTokenFactory,
    "oauth2_provider.RefreshToken": RefreshTokenFactory,
    "oauth2_provider.Grant": GrantFactory,
    "oauth2_provider.IDToken": IDTokenFactory,
    "core.App": another_app,
    "scheduling.Schedule": ScheduleFactory,
    "scheduling.EventType": EventTypeFactory,
    "scheduling.Booking": booking_with_attendee,
    "payments.Payment": PaymentFactory,
    "webhooks.Webhook": webhook_with_history,
    "webhooks.WebhookDelivery": delivery_with_attempt,
    "notifications.EmailMessage": EmailMessageFactory,
    "notifications.Reminder": ReminderFactory,
    "notifications.EventTypeNotifications": EventTypeNotificationsFactory,
    "calendars.CalendarConnection": lambda: ExternalCalendarFactory().connection,
}

REGISTERED = sorted(model._meta.label for model in admin.site._registry)


def model_admin_for(label: str):
    return next(model_admin for model, model_admin in admin.site._registry.items() if model._meta.label == label)


def assert_not_5xx(response, what: str):
    assert response.status_code < 500, f"{what} answered {response.status_code}"


def test_every_registered_model_has_a_row_factory():
    assert set(REGISTERED) <= set(ROW_FACTORIES), "add a row factory for: " + ", ".join(
        sorted(set(REGISTERED) - set(ROW_FACTORIES))
    )


@pytest.mark.parametrize("label", REGISTERED)
def test_no_page_of_a_registered_model_answers_5xx(operator_client, label):
    model_admin = model_admin_for(label)
    row = ROW_FACTORIES[label]()
    prefix = f"{model_admin.opts.app_label}_{model_admin.opts.model_name}"

    changelist = operator_client.get(reverse(f"admin:{prefix}_changelist"))
    assert changelist.status_code == 200
    assert_not_5xx(operator_client.get(reverse(f"admin:{prefix}_changelist"), {"q": "x"}), "search")
    assert_not_5xx(operator_client.get(reverse(f"admin:{prefix}_add")), "add page")

    change = operator_client.get(reverse(f"admin:{prefix}_change", args=[row.pk]))
    assert change.status_code == 200
    view_on_site = change.context.get("absolute_url") if change.context.get("has_absolute_url") else None
    if view_on_site and view_on_site.startswith("/"):
        assert_not_5xx(operator_client.get(view_on_site), f"View on site ({view_on_site})")

    # Every per-object page the admin declares (history, delete, reveal, reset secret, password).
    for pattern in model_admin.get_urls():
        converters = getattr(pattern.pattern, "converters", {})
        if not pattern.name or not ({"object_id", "id"} & set(converters)):
            continue
        url = reverse(f"admin:{pattern.name}", args=[row.pk])
        assert_not_5xx(operator_client.get(url), f"GET {url}")
        if pattern.name.endswith("reset_secret"):
            assert_not_5xx(operator_client.post(url), f"POST {url}")

    action_form = changelist.context.get("action_form")
    actions = [name for name, _ in action_form.fields["action"].choices if name] if action_form else []
    for action in actions:
        response = operator_client.post(
            reverse(f"admin:{prefix}_changelist"), {"action": action, "_selected_action": [row.pk]}
        )
        assert_not_5xx(response, f"action {action}")
