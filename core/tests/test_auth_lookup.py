"""The API key lookup (core.authentication.api_key_with_user): one precompiled query, same objects
as the ORM would build."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from accounts.models import ApiKey, User
from accounts.tests.factories import ApiKeyFactory
from core.authentication import api_key_with_user, hash_api_key

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


SQLITE_PROBE = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.utils import timezone
from accounts.models import ApiKey, User
from accounts.services import api_key_create
from core.authentication import api_key_with_user, hash_api_key
_, raw = api_key_create(user=User.objects.create_user(username="ann", password="x"), note="sqlite")
ApiKey.objects.update(last_used_at=timezone.now())
found = api_key_with_user(hash_api_key(raw))
expected = ApiKey.objects.select_related("user").get()
print(found.last_used_at == expected.last_used_at, found.last_used_at.tzinfo is not None,
      found.user.date_joined == expected.user.date_joined)
"""


@pytest.mark.django_db(databases=[])
def test_lookup_converts_values_as_the_orm_does_on_sqlite_too(tmp_path):
    """`make run` serves SQLite, whose date-times need the backend's converters (PostgreSQL's do
    not): a naive `last_used_at` once made every request after the first a 500 there."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    result = subprocess.run(
        [sys.executable, "-c", SQLITE_PROBE],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split() == ["True", "True", "True"]
