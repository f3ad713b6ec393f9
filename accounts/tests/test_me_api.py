"""GET /me (docs/api.md, Me)."""

import pytest

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory
from scheduling.tests.factories import ScheduleFactory

pytestmark = pytest.mark.django_db

ME_FIELDS = {
    "id", "username", "name", "email", "emailVerified", "bio", "avatar", "timeZone", "weekStart", "endTime",
    "bufferTime", "appTheme", "theme", "defaultScheduleId", "locale", "timeFormat", "hideBranding", "brandColor",
    "darkBrandColor", "allowDynamicBooking", "createdDate", "verified", "invitedTo", "role",
}  # fmt: skip


def test_me_with_an_oauth_token_has_exactly_the_contract_fields(api_client):
    user = UserFactory(week_start="Monday", time_format=24)
    schedule = ScheduleFactory(user=user)
    user.default_schedule = schedule
    user.save()
    token = AccessTokenFactory(user=user, scope="READ_PROFILE")
    response = api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {token.raw_token}")
    assert response.status_code == 200
    body = response.json()["user"]
    assert set(body) == ME_FIELDS
    assert body["id"] == user.pk
    assert body["weekStart"] == "Monday"
    assert body["timeFormat"] == 24
    assert body["defaultScheduleId"] == schedule.pk
    assert body["role"] == "USER"
    assert body["createdDate"].endswith("Z")
    assert body["createdDate"].startswith(user.date_joined.strftime("%Y-%m-%dT%H:%M:%S"))
    assert "password" not in response.content.decode()


def test_me_with_an_api_key_on_the_unversioned_path(api_client):
    key = ApiKeyFactory(user=UserFactory(role="ADMIN"))
    response = api_client.get(f"/me?apiKey={key.raw_key}")
    assert response.status_code == 200
    assert response.json()["user"]["role"] == "ADMIN"
    assert response.json()["user"]["defaultScheduleId"] is None


def test_me_needs_read_profile(api_client):
    token = AccessTokenFactory(scope="READ_SCHEDULE")
    response = api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {token.raw_token}")
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert response["WWW-Authenticate"] == 'Bearer realm="api", error="insufficient_scope", scope="READ_PROFILE"'


def test_me_without_credentials_is_401(api_client):
    response = api_client.get("/v1/me")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_me_with_a_revoked_or_unknown_token_is_401_invalid_token(api_client):
    response = api_client.get("/v1/me", HTTP_AUTHORIZATION="Bearer not-a-real-token")
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


@pytest.mark.parametrize("method", ["post", "patch", "delete"])
def test_me_is_read_only(api_client, method):
    key = ApiKeyFactory()
    response = getattr(api_client, method)("/v1/me", {}, format="json", HTTP_AUTHORIZATION=f"Bearer {key.raw_key}")
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
