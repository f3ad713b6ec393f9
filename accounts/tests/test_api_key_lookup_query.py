"""The API key lookup (accounts.authentication.api_key_with_user): one precompiled query, same objects
as the ORM would build."""

import pytest

from accounts.authentication import api_key_with_user, hash_api_key
from accounts.models import ApiKey, User
from accounts.tests.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


def test_api_key_lookup_returns_the_key_and_its_user_as_the_orm_does(django_assert_num_queries):
    api_key = ApiKeyFactory(user__name="Ann", note="ci")

    with django_assert_num_queries(1):
        found = api_key_with_user(hash_api_key(api_key.raw_key))
        user = found.user

    expected = ApiKey.objects.select_related("user").get(pk=api_key.pk)
    assert [getattr(found, field.attname) for field in ApiKey._meta.concrete_fields] == [
        getattr(expected, field.attname) for field in ApiKey._meta.concrete_fields
    ]
    assert [getattr(user, field.attname) for field in User._meta.concrete_fields] == [
        getattr(expected.user, field.attname) for field in User._meta.concrete_fields
    ]
    assert not found._state.adding and not user._state.adding


def test_unknown_api_key_finds_nothing_and_is_refused(api_client):
    assert api_key_with_user(hash_api_key("sk_live_unknown")) is None

    response = api_client.get("/v1/me", HTTP_AUTHORIZATION="Bearer sk_live_unknown")

    assert response.status_code == 401
    assert response.json()["code"] == "invalid_token"


def test_me_with_an_api_key_costs_one_query(api_client, django_assert_num_queries):
    api_key = ApiKeyFactory()
    api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")  # sets lastUsedAt once

    with django_assert_num_queries(1):
        response = api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")

    assert response.status_code == 200
    assert response.json()["user"]["id"] == api_key.user_id
