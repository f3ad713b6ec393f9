"""API keys (docs/oauth.md, API keys): created by `createapikey`, accepted in the header and `?apiKey=`."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from accounts.authentication import CredentialAuthentication, hash_api_key
from accounts.models import ApiKey
from accounts.services import api_key_revoke
from accounts.tests.factories import ApiKeyFactory, UserFactory
from core.scopes import all_scopes

pytestmark = pytest.mark.django_db

ME_URL = "/api/auth/oauth/me"


def create_key(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("createapikey", *args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue()


def test_createapikey_prints_the_key_once_and_stores_only_its_hash():
    user = UserFactory()
    raw_key, message = create_key(user.username, "--note", "CI deploys")
    assert raw_key.startswith("sk_live_")
    api_key = ApiKey.objects.get()
    assert api_key.user == user
    assert api_key.note == "CI deploys"
    assert api_key.expires_at is None
    assert api_key.hashed_key == hash_api_key(raw_key)
    assert raw_key not in (api_key.prefix, api_key.hashed_key)
    assert raw_key.startswith(api_key.prefix)
    assert "not shown again" in message


def test_createapikey_with_expiry():
    user = UserFactory()
    create_key(user.username, "--expires-days", "30")
    expires_at = ApiKey.objects.get().expires_at
    assert timedelta(days=29, hours=23) < expires_at - timezone.now() <= timedelta(days=30)


@pytest.mark.parametrize("args", [["nobody"], ["{user}", "--expires-days", "0"]])
def test_createapikey_refuses_bad_input_and_creates_nothing(args):
    user = UserFactory()
    with pytest.raises(CommandError):
        create_key(*[arg.format(user=user.username) for arg in args])
    assert ApiKey.objects.count() == 0


def test_createapikey_refuses_an_inactive_user():
    user = UserFactory(is_active=False)
    with pytest.raises(CommandError):
        create_key(user.username)
    assert ApiKey.objects.count() == 0


def test_key_created_by_the_command_works_in_the_header(api_client):
    user = UserFactory()
    raw_key, _ = create_key(user.username)
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert response.status_code == 200
    assert response.json()["username"] == user.username


def test_key_works_as_api_key_query_parameter(api_client):
    api_key = ApiKeyFactory()
    response = api_client.get(ME_URL, {"apiKey": api_key.raw_key})
    assert response.status_code == 200
    assert response.json()["id"] == api_key.user_id


def test_api_key_has_every_scope():
    api_key = ApiKeyFactory()
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")
    user, credential = CredentialAuthentication().authenticate(Request(request))
    assert user == api_key.user
    assert credential.kind == "api_key"
    assert credential.scopes == all_scopes()


@pytest.mark.parametrize("where", ["header", "query"])
def test_expired_key_is_401_invalid_token(api_client, where):
    api_key = ApiKeyFactory(expires_at=timezone.now() - timedelta(seconds=1))
    response = call(api_client, api_key.raw_key, where)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"
    assert response["WWW-Authenticate"] == 'Bearer realm="api", error="invalid_token"'
    api_key.refresh_from_db()
    assert api_key.last_used_at is None


@pytest.mark.parametrize("where", ["header", "query"])
def test_revoked_key_is_401_invalid_token(api_client, where):
    api_key = ApiKeyFactory()
    api_key_revoke(api_key=api_key)
    response = call(api_client, api_key.raw_key, where)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


@pytest.mark.parametrize("where", ["header", "query"])
def test_unknown_key_is_401_invalid_token(api_client, where):
    response = call(api_client, "sk_live_not-a-key", where)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


@pytest.mark.parametrize("where", ["header", "query"])
def test_key_of_a_locked_user_is_403_as_in_cal_v1(api_client, where):
    # Cal.com: apps/api/v1/test/lib/middleware/verifyApiKey.test.ts, "should return 403 if user is
    # locked or blocked". The key is genuine; the account may not act.
    api_key = ApiKeyFactory(user=UserFactory(is_active=False))
    response = call(api_client, api_key.raw_key, where)
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert response.json()["message"] == "User is locked or blocked."
    assert "WWW-Authenticate" not in response


def test_last_used_at_is_written_at_most_once_a_minute(api_client):
    api_key = ApiKeyFactory()
    assert call(api_client, api_key.raw_key, "header").status_code == 200
    api_key.refresh_from_db()
    first_use = api_key.last_used_at
    assert first_use is not None

    assert call(api_client, api_key.raw_key, "query").status_code == 200
    api_key.refresh_from_db()
    assert api_key.last_used_at == first_use

    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=first_use - timedelta(seconds=61))
    assert call(api_client, api_key.raw_key, "header").status_code == 200
    api_key.refresh_from_db()
    assert api_key.last_used_at > first_use


def test_recently_used_key_costs_one_query(api_client, django_assert_num_queries):
    api_key = ApiKeyFactory()
    call(api_client, api_key.raw_key, "header")
    with django_assert_num_queries(1):
        assert call(api_client, api_key.raw_key, "header").status_code == 200


def call(api_client, raw_key, where):
    if where == "header":
        return api_client.get(ME_URL, HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return api_client.get(ME_URL, {"apiKey": raw_key})
