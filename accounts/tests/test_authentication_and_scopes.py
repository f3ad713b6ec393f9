"""The resource API's one authentication + scope stack (docs/api.md, Scopes), with real credentials."""

from datetime import timedelta

import pytest
from django.utils import timezone
from oauth2_provider.models import AccessToken
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, ApplicationFactory

pytestmark = pytest.mark.django_db

ME_URL = "/api/auth/oauth/me"


class ScheduleLikeView(APIView):
    """Stands in for a resource viewset: it only declares its scopes."""

    scopes = {"GET": "READ_SCHEDULE", "POST": "WRITE_SCHEDULE"}

    def get(self, request):
        return Response({"user": request.user.pk, "kind": request.auth.kind})

    def post(self, request):
        return Response({"ok": True})

    def delete(self, request):  # no scope declared for DELETE: must never be reachable
        return Response({"deleted": True})


def call_view(method: str, authorization: str | None = None, path: str = "/resource"):
    factory = APIRequestFactory()
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    request = getattr(factory, method)(path, **headers)
    response = ScheduleLikeView.as_view()(request)
    response.render()
    return response


def bearer(token) -> str:
    return f"Bearer {token.raw_token}"


def test_no_credentials_is_401_not_authenticated(api_client):
    response = api_client.get(ME_URL)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "not_authenticated"
    assert body["status"] == 401
    assert body["message"] == body["detail"]
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize("authorization", ["Basic dXNlcjpwYXNz", "Token abc", "Bearer", "Bearer    "])
def test_other_authorization_schemes_are_invalid_token(api_client, authorization):
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION=authorization)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"
    assert response["WWW-Authenticate"] == 'Bearer realm="api", error="invalid_token"'


def test_access_token_in_the_query_string_is_never_accepted(api_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    response = api_client.get(ME_URL, {"access_token": token.raw_token})
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    as_api_key = api_client.get(ME_URL, {"apiKey": token.raw_token})
    assert as_api_key.status_code == 401
    assert as_api_key.json()["code"] == "invalid_token"


def test_expired_access_token_is_invalid_token(api_client):
    token = AccessTokenFactory(expires=timezone.now() - timedelta(seconds=1))
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token))
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


def test_token_of_a_suspended_client_stops_working_at_once(api_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    assert api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token)).status_code == 200
    token.application.profile.suspended = True
    token.application.profile.save()
    response = api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token))
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


def test_token_of_an_inactive_user_stops_working_at_once(api_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    token.user.is_active = False
    token.user.save()
    assert api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token)).status_code == 401


def test_token_of_a_client_without_profile_still_works(api_client):
    application = ApplicationFactory()
    application.profile.delete()
    token = AccessTokenFactory(application=application, scope="READ_PROFILE")
    assert api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token)).status_code == 200


def test_scope_needed_per_method():
    token = AccessTokenFactory(scope="READ_SCHEDULE")
    assert call_view("get", bearer(token)).status_code == 200
    response = call_view("post", bearer(token))
    assert response.status_code == 403
    assert response.data["code"] == "insufficient_scope"
    assert response["WWW-Authenticate"] == 'Bearer realm="api", error="insufficient_scope", scope="WRITE_SCHEDULE"'


def test_write_scope_implies_read_scope():
    token = AccessTokenFactory(scope="WRITE_SCHEDULE")
    assert call_view("get", bearer(token)).status_code == 200
    assert call_view("post", bearer(token)).status_code == 200


def test_comma_separated_token_scopes_are_understood():
    token = AccessTokenFactory(scope="READ_PROFILE,WRITE_SCHEDULE")
    assert call_view("post", bearer(token)).status_code == 200


def test_method_without_a_declared_scope_is_refused_even_for_an_api_key():
    api_key = ApiKeyFactory()
    response = call_view("delete", f"Bearer {api_key.raw_key}")
    assert response.status_code == 403


def test_method_the_view_does_not_have_is_405():
    api_key = ApiKeyFactory()
    response = call_view("put", f"Bearer {api_key.raw_key}")
    assert response.status_code == 405


def test_api_key_passes_every_scope_check():
    api_key = ApiKeyFactory()
    response = call_view("post", f"Bearer {api_key.raw_key}")
    assert response.status_code == 200


def test_oauth_token_lookup_is_one_query(api_client, django_assert_num_queries):
    token = AccessTokenFactory(scope="READ_PROFILE")
    with django_assert_num_queries(1):
        assert api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token)).status_code == 200


def test_oauth_token_last_use_is_recorded_at_most_once_a_minute(api_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    long_ago = timezone.now() - timedelta(minutes=5)
    AccessToken.objects.filter(pk=token.pk).update(updated=long_ago)
    api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token))
    touched = AccessToken.objects.get(pk=token.pk).updated
    assert touched > long_ago
    api_client.get(ME_URL, HTTP_AUTHORIZATION=bearer(token))
    assert AccessToken.objects.get(pk=token.pk).updated == touched


def test_request_carries_the_tokens_user_and_credential_kind():
    token = AccessTokenFactory(scope="READ_SCHEDULE")
    response = call_view("get", bearer(token))
    assert response.data == {"user": token.user.pk, "kind": "oauth"}
