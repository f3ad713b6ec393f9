"""A typed client generated from the served OpenAPI document, used as an integrator would.

openapi-python-client generates the client into a temporary directory (it must print no warning);
the tests then drive every resource's lifecycle through it against the live server, and the
documented error answers, each parsed as its model (`Problem` for the API, `OAuthError` for the
OAuth endpoints). Every answer is also checked against the document by the suite's contract check.
"""

import base64
import hashlib
import importlib
import secrets
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from django.test import Client as DjangoClient

from accounts.tests.factories import (
    PASSWORD,
    AccessTokenFactory,
    ApiKeyFactory,
    ApplicationFactory,
    UserFactory,
)
from conftest import check_httpx_response
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

PACKAGE = "scheduling_client"
GENERATOR_CONFIG = f"post_hooks: []\npackage_name_override: {PACKAGE}\n"


@pytest.fixture(scope="module")
def generated(live_server, tmp_path_factory):
    """The generated package, imported; the generator's whole output must be free of warnings."""
    workdir = tmp_path_factory.mktemp("generated-client")
    document = workdir / "openapi.json"
    document.write_bytes(requests.get(f"{live_server.url}/v1/openapi.json", timeout=30).content)
    config = workdir / "config.yaml"
    config.write_text(GENERATOR_CONFIG)
    generator = Path(sys.executable).with_name("openapi-python-client")
    command = [str(generator), "generate", "--path", str(document), "--meta", "none", "--config", str(config)]
    result = subprocess.run(
        [*command, "--output-path", str(workdir / PACKAGE)], capture_output=True, text=True, timeout=120
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    assert "skipping" not in output.lower(), output
    sys.path.insert(0, str(workdir))
    try:
        yield _Generated(importlib.import_module(PACKAGE))
    finally:
        sys.path.remove(str(workdir))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
            del sys.modules[name]


class _Generated:
    """The generated package's modules by their short names: `api.v1_schedules_create`, `models`."""

    def __init__(self, package):
        self.package = package
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self.types = importlib.import_module(f"{PACKAGE}.types")

    def api(self, name: str):
        group = "oauth" if name.startswith("oauth_") else "v1"
        return importlib.import_module(f"{PACKAGE}.api.{group}.{name}")

    def client(self, base_url: str, token: str | None = None, **httpx_args):
        """Strict: an undocumented status raises UnexpectedStatus, and every answer is checked
        against the document too."""
        httpx_args = {"event_hooks": {"response": [check_httpx_response]}, **httpx_args}
        if token is None:
            return self.package.Client(base_url=base_url, raise_on_unexpected_status=True, httpx_args=httpx_args)
        return self.package.AuthenticatedClient(
            base_url=base_url, token=token, raise_on_unexpected_status=True, httpx_args=httpx_args
        )


def _call(generated, operation: str, status: int, **kwargs):
    response = generated.api(operation).sync_detailed(**kwargs)
    assert response.status_code == status, (operation, response.status_code, response.content[:500])
    return response.parsed


def _problem(generated, operation: str, status: int, code: str, **kwargs):
    parsed = _call(generated, operation, status, **kwargs)
    assert isinstance(parsed, generated.models.Problem), (operation, parsed)
    assert parsed.status == status and parsed.code == code, (operation, parsed)
    return parsed


def _monday_ahead() -> date:
    today = date.today()
    return today + timedelta(days=14 - today.weekday())


@pytest.mark.django_db(transaction=True)
def test_every_resource_lifecycle_through_the_generated_client(generated, live_server):
    models = generated.models
    user = UserFactory()
    invitee = UserFactory()
    api = generated.client(live_server.url, ApiKeyFactory(user=user).raw_key)

    me = _call(generated, "v1_me_retrieve", 200, client=api)
    assert me.user.id == user.pk

    # Schedules
    created = _call(
        generated,
        "v1_schedules_create",
        200,
        client=api,
        body=models.ScheduleCreateRequest(
            name="Office hours",
            time_zone="Europe/Berlin",
            availability=[models.AvailabilityRequest(start_time="09:00", end_time="17:00", days=[1, 2, 3, 4, 5])],
        ),
    )
    schedule_id = created.schedule.id
    listed = _call(generated, "v1_schedules_list", 200, client=api)
    assert schedule_id in [schedule.id for schedule in listed.schedules]
    assert _call(generated, "v1_schedules_retrieve", 200, id=schedule_id, client=api).schedule.name == "Office hours"
    patched = _call(
        generated,
        "v1_schedules_partial_update",
        200,
        id=schedule_id,
        client=api,
        body=models.PatchedScheduleUpdateRequest(name="Consulting hours"),
    )
    assert patched.schedule.name == "Consulting hours"

    # Event types
    event_type = _call(
        generated,
        "v1_event_types_create",
        200,
        client=api,
        body=models.EventTypeCreateRequest(title="Intro call", slug="intro-call", length=30, schedule_id=schedule_id),
    ).event_type
    assert event_type.id in [item.id for item in _call(generated, "v1_event_types_list", 200, client=api).event_types]
    fetched = _call(generated, "v1_event_types_retrieve", 200, id=event_type.id, client=api)
    assert fetched.event_type.slug == "intro-call"
    _call(
        generated,
        "v1_event_types_partial_update",
        200,
        id=event_type.id,
        client=api,
        body=models.PatchedEventTypeUpdateRequest(description="Half an hour"),
    )

    # Slots and bookings: book the first free slot, then the taken slot again is the 409.
    monday = _monday_ahead()
    slots = _call(
        generated,
        "v1_slots_list",
        200,
        client=api,
        event_type_id=event_type.id,
        start_time=monday.isoformat(),
        end_time=(monday + timedelta(days=1)).isoformat(),
        time_zone="Europe/Berlin",
    )
    day = slots.slots.additional_properties[monday.isoformat()]
    first, second = (datetime.fromisoformat(slot.time) for slot in day[:2])
    body = models.BookingCreateRequest(
        event_type_id=event_type.id,
        start=first,
        time_zone="Europe/London",
        name="Ada Lovelace",
        email="ada@example.org",
    )
    booking = _call(generated, "v1_bookings_create", 200, client=api, body=body)
    assert isinstance(booking, models.BookingCreated)
    assert booking.payment_required is False and booking.payment == []
    assert isinstance(booking.payment_uid, generated.types.Unset)  # an unpaid booking leaves it out
    taken = _problem(generated, "v1_bookings_create", 409, "conflict", client=api, body=body)
    assert taken.detail
    assert booking.id in [item.id for item in _call(generated, "v1_bookings_list", 200, client=api).bookings]
    assert _call(generated, "v1_bookings_retrieve", 200, id=booking.id, client=api).booking.uid == booking.uid
    moved = _call(
        generated,
        "v1_bookings_partial_update",
        200,
        id=booking.id,
        client=api,
        body=models.PatchedBookingUpdateRequest(start_time=second),
    )
    assert moved.booking.start_time == second
    cancelled = _call(
        generated, "v1_bookings_destroy", 200, id=booking.id, client=api, cancellation_reason="Plans changed"
    )
    assert cancelled is not None

    # Teams and memberships
    team = _call(
        generated, "v1_teams_create", 200, client=api, body=models.TeamRequest(name="Support", slug="support")
    ).team
    assert team.id in [item.id for item in _call(generated, "v1_teams_list", 200, client=api).teams]
    assert _call(generated, "v1_teams_retrieve", 200, id=team.id, client=api).team.slug == "support"
    _call(
        generated,
        "v1_teams_partial_update",
        200,
        id=team.id,
        client=api,
        body=models.PatchedTeamUpdateRequest(bio="First line"),
    )
    invitation = _call(
        generated,
        "v1_memberships_create",
        200,
        client=api,
        body=models.MembershipCreateRequest(user_id=invitee.pk, team_id=team.id),
    ).membership
    assert invitation.accepted is False
    membership_id = f"{invitee.pk}_{team.id}"
    assert len(_call(generated, "v1_memberships_list", 200, client=api).memberships) == 2
    fetched = _call(generated, "v1_memberships_retrieve", 200, id=membership_id, client=api)
    assert fetched.membership.user_id == invitee.pk
    promoted = _call(
        generated,
        "v1_memberships_partial_update",
        200,
        id=membership_id,
        client=api,
        body=models.PatchedMembershipUpdateRequest(role=models.MembershipRoleEnum.ADMIN),
    )
    assert promoted.membership.role == models.MembershipRoleEnum.ADMIN
    _call(generated, "v1_memberships_destroy", 200, id=membership_id, client=api)
    _call(generated, "v1_teams_destroy", 200, id=team.id, client=api)

    # Webhooks (a trigger this service never emits, so nothing is sent)
    webhook = _call(
        generated,
        "v1_webhooks_create",
        200,
        client=api,
        body=models.WebhookCreateRequest(subscriber_url="http://127.0.0.1:9/hook", event_triggers=["FORM_SUBMITTED"]),
    ).webhook
    assert webhook.secret.startswith("whsec_")
    assert webhook.id in [item.id for item in _call(generated, "v1_webhooks_list", 200, client=api).webhooks]
    assert _call(generated, "v1_webhooks_retrieve", 200, id=webhook.id, client=api).webhook.secret is None
    _call(
        generated,
        "v1_webhooks_partial_update",
        200,
        id=webhook.id,
        client=api,
        body=models.PatchedWebhookUpdateRequest(active=False),
    )
    _call(generated, "v1_webhooks_destroy", 200, id=webhook.id, client=api)

    # Payments are read-only.
    payment = PaymentFactory(booking=BookingFactory(organizer=user))
    assert [item.id for item in _call(generated, "v1_payments_list", 200, client=api).payments] == [payment.pk]
    assert _call(generated, "v1_payments_retrieve", 200, id=payment.pk, client=api).payment.uid == payment.uid

    # The rest of the lifecycle: the event type and the schedule go.
    _call(generated, "v1_event_types_destroy", 200, id=event_type.id, client=api)
    _call(generated, "v1_schedules_destroy", 200, id=schedule_id, client=api)


@pytest.mark.django_db(transaction=True)
def test_documented_errors_parse_as_the_problem_model(generated, live_server):
    models = generated.models
    user = UserFactory()
    api = generated.client(live_server.url, ApiKeyFactory(user=user).raw_key)
    someone_elses = ScheduleFactory()

    _problem(generated, "v1_schedules_retrieve", 404, "not_found", id=someone_elses.pk, client=api)
    invalid = _problem(
        generated,
        "v1_schedules_create",
        400,
        "validation_error",
        client=api,
        body=models.ScheduleCreateRequest(name="N", time_zone="Nowhere/Nothing"),
    )
    assert "timeZone" in invalid.errors.additional_properties
    anonymous = generated.client(live_server.url)
    _problem(generated, "v1_schedules_list", 401, "not_authenticated", client=anonymous)
    narrow = generated.client(live_server.url, AccessTokenFactory(user=user, scope="READ_PROFILE").raw_token)
    denied = _problem(generated, "v1_payments_list", 403, "insufficient_scope", client=narrow)
    assert "READ_PAYMENT" in denied.detail
    # The token's own scope still works.
    assert _call(generated, "v1_me_retrieve", 200, client=narrow).user.id == user.pk
    event_type = EventTypeFactory(owner=user)
    BookingFactory(organizer=user, event_type=event_type)


@pytest.mark.django_db(transaction=True)
def test_oauth_operations_parse_through_the_generated_client(generated, live_server):
    """Metadata, token, refreshToken, introspect and revoke, and their errors, as models."""
    models = generated.models
    user = UserFactory()
    redirect_uri = "https://app.example/callback"
    secret = "generated-client-secret"
    application = ApplicationFactory(redirect_uris=redirect_uri, client_secret=secret)
    anonymous = generated.client(live_server.url)
    basic = generated.client(live_server.url, auth=(application.client_id, secret))

    metadata = _call(generated, "oauth_metadata", 200, client=anonymous)
    assert metadata.token_endpoint.endswith("/api/auth/oauth/token")

    # The code comes from the user's browser: sign in and allow (Django's test client, in-process).
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    browser = DjangoClient()
    assert browser.login(username=user.username, password=PASSWORD)
    query = {
        "client_id": application.client_id,
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": "READ_PROFILE READ_BOOKING",
        "state": "s1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    authorize_url = f"/auth/oauth2/authorize?{urlencode(query)}"
    assert browser.get(authorize_url).status_code == 200
    allowed = browser.post(authorize_url, {"decision": "allow"})
    assert allowed.status_code == 302, allowed.content[:300]
    code = parse_qs(urlsplit(allowed["Location"]).query)["code"][0]

    tokens = _call(
        generated,
        "oauth_token",
        200,
        client=basic,
        body=models.OAuthTokenRequest(
            grant_type=models.OAuthTokenRequestGrantType.AUTHORIZATION_CODE,
            code=code,
            redirect_uri=redirect_uri,
            code_verifier=verifier,
        ),
    )
    assert isinstance(tokens, models.OAuthTokens)
    refreshed = _call(
        generated,
        "oauth_refresh_token",
        200,
        client=basic,
        body=models.OAuthRefreshRequest(refresh_token=tokens.refresh_token),
    )
    assert refreshed.refresh_token != tokens.refresh_token
    wrong_secret = generated.client(live_server.url, auth=(application.client_id, "wrong"))
    refused = _call(
        generated,
        "oauth_refresh_token",
        401,
        client=wrong_secret,
        body=models.OAuthRefreshRequest(refresh_token=refreshed.refresh_token),
    )
    assert refused.error == models.OAuthErrorError.INVALID_CLIENT

    introspection = _call(
        generated,
        "oauth_introspect",
        200,
        client=basic,
        body=models.OAuthTokenRevokeRequest(token=refreshed.access_token),
    )
    assert introspection.active is True and introspection.username == user.username
    _call(
        generated,
        "oauth_revoke",
        200,
        client=basic,
        body=models.OAuthTokenRevokeRequest(token=refreshed.access_token),
    )
    gone = _call(
        generated,
        "oauth_introspect",
        200,
        client=basic,
        body=models.OAuthTokenRevokeRequest(token=refreshed.access_token),
    )
    assert gone.active is False

    # A replayed code is refused with the OAuth error model.
    replay = _call(
        generated,
        "oauth_token",
        400,
        client=basic,
        body=models.OAuthTokenRequest(
            grant_type=models.OAuthTokenRequestGrantType.AUTHORIZATION_CODE,
            code=code,
            redirect_uri=redirect_uri,
            code_verifier=verifier,
        ),
    )
    assert isinstance(replay, models.OAuthError) and replay.error == models.OAuthErrorError.INVALID_GRANT
