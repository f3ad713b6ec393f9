"""Sign-in throttle (accounts.throttle) on the real forms: /auth/login and the admin's login, through
Django's test client with CSRF checks on."""

import re

import pytest
from django.core.cache import cache
from django.test import Client

from accounts.tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.SIGNIN_THROTTLE_PER_ACCOUNT = 3
    settings.SIGNIN_THROTTLE_PER_ADDRESS = 6
    settings.SIGNIN_THROTTLE_WINDOW_SECONDS = 300
    cache.clear()


def sign_in(username: str, password: str, *, path: str = "/auth/login", address: str = "127.0.0.1"):
    """A fresh browser: fetch the form for its CSRF token, then post it."""
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)
    page = client.get(path).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = client.post(path, {"username": username, "password": password, "csrfmiddlewaretoken": token})
    return client, response


def is_signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_after_too_many_failures_even_the_right_password_is_refused_with_a_429(settings):
    user = UserFactory()
    for _ in range(3):
        _, response = sign_in(user.username, "wrong password")
        assert response.status_code == 200
        assert "did not match" in response.content.decode()

    client, refused = sign_in(user.username, PASSWORD)

    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 300
    page = refused.content.decode()
    assert "Too many failed sign-in attempts. Try again in 5 minutes." in page
    assert "did not match" not in page
    assert not is_signed_in(client)


def test_the_account_count_ignores_case_and_spaces_in_the_username():
    UserFactory(username="alice")
    for variant in ("Alice", " alice", "ALICE"):
        sign_in(variant, "wrong password")

    _, refused = sign_in("alice", PASSWORD)

    assert refused.status_code == 429


def test_a_successful_sign_in_clears_the_accounts_failures():
    user = UserFactory()
    sign_in(user.username, "wrong password")
    sign_in(user.username, "wrong password")
    client, response = sign_in(user.username, PASSWORD)
    assert response.status_code == 302
    assert is_signed_in(client)

    for _ in range(2):
        sign_in(user.username, "wrong password")
    client, response = sign_in(user.username, PASSWORD)

    assert response.status_code == 302
    assert is_signed_in(client)


def test_one_address_trying_many_accounts_is_refused_for_every_account():
    users = UserFactory.create_batch(4)
    for user in users[:3]:
        sign_in(user.username, "wrong password", address="192.0.2.10")
        sign_in(user.username, "wrong password", address="192.0.2.10")

    client, refused = sign_in(users[3].username, PASSWORD, address="192.0.2.10")
    assert refused.status_code == 429
    assert not is_signed_in(client)

    client, response = sign_in(users[3].username, PASSWORD, address="192.0.2.11")
    assert response.status_code == 302
    assert is_signed_in(client)


def test_ipv6_addresses_of_one_slash_64_share_a_count():
    users = UserFactory.create_batch(2)
    for index in range(6):
        sign_in(users[0].username if index < 2 else f"nobody{index}", "wrong", address=f"2001:db8:1:2::{index + 1:x}")

    _, refused = sign_in(users[1].username, PASSWORD, address="2001:db8:1:2:ffff::9")
    client, elsewhere = sign_in(users[1].username, PASSWORD, address="2001:db8:1:3::1")

    assert refused.status_code == 429
    assert elsewhere.status_code == 302
    assert is_signed_in(client)


def test_behind_a_proxy_the_address_is_the_last_forwarded_for_entry(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    user = UserFactory()
    other = UserFactory()

    def through_proxy(username, password, forwarded_for):
        client = Client(enforce_csrf_checks=True, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded_for)
        page = client.get("/auth/login").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        return client.post("/auth/login", {"username": username, "password": password, "csrfmiddlewaretoken": token})

    for index in range(6):  # a forged first entry does not give the client a fresh address
        through_proxy(f"nobody{index}", "wrong password", f"203.0.113.{index}, 198.51.100.7")

    assert through_proxy(user.username, PASSWORD, "198.51.100.7").status_code == 429
    assert through_proxy(other.username, PASSWORD, "198.51.100.8").status_code == 302


def test_the_admin_login_is_throttled_too():
    staff = UserFactory(is_staff=True, is_superuser=True)
    for _ in range(3):
        _, response = sign_in(staff.username, "wrong password", path="/admin/login/")
        assert response.status_code == 200

    client, refused = sign_in(staff.username, PASSWORD, path="/admin/login/")

    assert "Too many failed sign-in attempts. Try again in 5 minutes." in refused.content.decode()
    assert not is_signed_in(client)
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def test_sign_in_works_unthrottled_while_redis_is_away(private_redis):
    user = UserFactory()
    private_redis.stop()
    for _ in range(5):
        _, response = sign_in(user.username, "wrong password")
        assert response.status_code == 200

    client, response = sign_in(user.username, PASSWORD)

    assert response.status_code == 302
    assert is_signed_in(client)
