"""`seed_demo` loads usable demo data and is idempotent."""

import base64
import io
from urllib.parse import parse_qs, urlsplit

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.management import CommandError, call_command
from django.forms.models import model_to_dict
from oauth2_provider.models import Application
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request
from rest_framework.request import Request as DRFRequest
from rest_framework.test import APIRequestFactory

from accounts.authentication import CredentialAuthentication
from accounts.models import Membership, MembershipRole, User
from accounts.oauth.services import oauth_client_reset_secret, oauth_client_secret_matches
from core.scopes import all_scopes
from payments.models import Payment
from scheduling.models import Booking, EventType

pytestmark = pytest.mark.django_db

PROJECT_APPS = ("accounts", "core", "scheduling", "payments", "webhooks", "oauth2_provider")


def seed(**options) -> str:
    out = io.StringIO()
    call_command("seed_demo", force=True, stdout=out, **options)
    return out.getvalue()


def snapshot() -> dict:
    """Every row of every project model, as plain values."""
    return {
        model._meta.label: sorted(
            (repr(model_to_dict(row, fields=[field.name for field in model._meta.concrete_fields])) for row in rows),
        )
        for app_label in PROJECT_APPS
        for model in apps.get_app_config(app_label).get_models()
        for rows in [model.objects.all()]
    }


def printed(output: str, label: str) -> str:
    line = next(line for line in output.splitlines() if line.strip().startswith(label))
    return line.split(label, 1)[1].split()[0]


def test_seeding_twice_changes_nothing():
    seed()
    first = snapshot()
    assert sum(len(rows) for rows in first.values()) > 20

    seed()

    assert snapshot() == first


def test_demo_data_has_an_operator_a_team_a_bookable_event_type_bookings_and_payments():
    seed()

    operator = User.objects.get(username="admin")
    assert operator.is_staff and operator.is_superuser and operator.check_password("admin")
    demo = User.objects.get(username="demo")
    assert demo.check_password("demo")
    memberships = Membership.objects.filter(team__slug="demo-team", accepted=True)
    assert {(membership.user.username, membership.role) for membership in memberships} == {
        ("demo", MembershipRole.OWNER),
        ("alex", MembershipRole.MEMBER),
    }
    event_type = EventType.objects.get(owner=demo, slug="30min")
    assert (event_type.title, event_type.length, event_type.hidden) == ("30 min meeting", 30, False)
    schedule = event_type.schedule
    assert (schedule.time_zone, demo.default_schedule) == ("Europe/Berlin", schedule)
    rule = schedule.availability.get()
    assert (rule.days, f"{rule.start_time:%H:%M}", f"{rule.end_time:%H:%M}") == ([1, 2, 3, 4, 5], "09:00", "17:00")
    assert Booking.objects.filter(organizer=demo).count() >= 3
    payments = Payment.objects.filter(booking__organizer=demo, app__slug="stripe")
    assert {(payment.success, payment.refunded) for payment in payments} == {
        (True, False),
        (False, False),
        (True, True),
    }


def test_the_printed_client_credentials_and_authorize_url_work():
    output = seed()

    client_id, client_secret = printed(output, "OAuth client_id:"), printed(output, "client_secret:")
    application = Application.objects.get(client_id=client_id)
    assert application.client_type == Application.CLIENT_CONFIDENTIAL
    assert set(application.profile.scope_ceiling) == all_scopes()
    assert client_secret not in application.client_secret

    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    token_request = Request(
        "http://127.0.0.1:8000/api/auth/oauth/token",
        http_method="POST",
        headers={"HTTP_AUTHORIZATION": f"Basic {basic}"},
    )
    token_request.grant_type = "authorization_code"
    assert oauth2_settings.OAUTH2_VALIDATOR_CLASS().authenticate_client(token_request)

    url = next(line.strip() for line in output.splitlines() if "/auth/oauth2/authorize?" in line)
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "http://127.0.0.1:8000/auth/oauth2/authorize"
    assert parse_qs(parts.query) == {
        "client_id": [client_id],
        "redirect_uri": ["http://127.0.0.1:8000/demo/callback"],
        "response_type": ["code"],
        "scope": ["READ_PROFILE READ_BOOKING"],
        "state": ["demo"],
    }
    assert application.redirect_uri_allowed("http://127.0.0.1:8000/demo/callback")


def test_the_printed_api_key_authenticates_as_the_demo_user():
    output = seed()
    api_key = printed(output, "Demo API key:")

    request = DRFRequest(APIRequestFactory().get("/v1/bookings", {"apiKey": api_key}))
    user, credential = CredentialAuthentication().authenticate(request)

    assert (user.username, credential.kind) == ("demo", "api_key")


def test_seeding_restores_a_demo_secret_that_was_changed():
    output = seed()
    application = Application.objects.get(client_id=printed(output, "OAuth client_id:"))
    oauth_client_reset_secret(application=application)

    seed()

    application.refresh_from_db()
    assert oauth_client_secret_matches(application=application, client_secret=printed(output, "client_secret:"))


def test_seeding_refuses_to_run_with_debug_off_unless_forced(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="DEBUG=1"):
        call_command("seed_demo", stdout=io.StringIO())

    assert not User.objects.filter(username="admin").exists()


def test_the_admin_list_tells_the_demo_payments_apart():
    seed()
    payment_admin = admin.site._registry[Payment]

    shown = {payment_admin.short_uid(payment) for payment in Payment.objects.all()}

    assert len(shown) == Payment.objects.count() == 3
    assert not any("…" in cell for cell in shown)


def test_seeding_over_an_older_seed_keeps_one_payment_per_booking():
    seed()
    Payment.objects.filter(uid="demo_paid").update(uid="pay_demo_paid")  # as an older seed named it

    seed()

    assert Payment.objects.count() == 3
    assert Payment.objects.filter(uid="pay_demo_paid").exists()
