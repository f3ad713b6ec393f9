"""The client's address behind load balancers and ingresses (core.client_address): the trusted
proxies' entries of X-Forwarded-For are skipped, by count (TRUSTED_PROXY_COUNT) or by network
(TRUSTED_PROXY_CIDRS), and it is the only place in the service that reads the address."""

import re
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory

from accounts.tests.factories import PASSWORD, UserFactory
from core.client_address import client_address

ROOT = Path(__file__).resolve().parents[1]
INGRESS, BALANCER = "10.1.0.9", "10.2.0.4"


def request_from(remote: str, forwarded_for: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded_for is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded_for
    return RequestFactory().get("/", **extra)


@pytest.mark.parametrize(
    ("count", "forwarded_for", "expected"),
    [
        (0, "203.0.113.5", INGRESS),  # no proxy trusted: the header is the client's to forge
        (1, f"203.0.113.5, {BALANCER}", BALANCER),
        (2, f"203.0.113.5, {BALANCER}", "203.0.113.5"),
        (2, f"198.51.100.1, 203.0.113.5, {BALANCER}", "203.0.113.5"),  # a forged first entry is ignored
        (2, None, INGRESS),  # fewer hops than proxies: the leftmost known address
        (3, f"203.0.113.5, {BALANCER}", "203.0.113.5"),
    ],
)
def test_trusted_proxy_count_skips_that_many_hops(settings, count, forwarded_for, expected):
    settings.TRUSTED_PROXY_CIDRS = []
    settings.TRUSTED_PROXY_COUNT = count

    assert client_address(request_from(INGRESS, forwarded_for)) == expected


@pytest.mark.parametrize(
    ("forwarded_for", "expected"),
    [
        (f"203.0.113.5, {BALANCER}", "203.0.113.5"),
        (f"198.51.100.1, 203.0.113.5, {BALANCER}", "203.0.113.5"),
        ("203.0.113.5", "203.0.113.5"),  # straight from the ingress
        (f"{BALANCER}", BALANCER),  # every hop trusted: the leftmost
        ("not an address, 10.2.0.4", "not an address"),
    ],
)
def test_trusted_proxy_cidrs_skip_the_proxies_networks(settings, forwarded_for, expected):
    settings.TRUSTED_PROXY_CIDRS = ["10.0.0.0/8", "fd00::/8"]
    settings.TRUSTED_PROXY_COUNT = 0

    assert client_address(request_from(INGRESS, forwarded_for)) == expected


@pytest.mark.django_db
def test_behind_a_balancer_and_an_ingress_one_clients_failures_lock_out_no_one_else(settings):
    settings.TRUSTED_PROXY_COUNT = 2
    settings.SIGNIN_THROTTLE_PER_ACCOUNT = 50
    settings.SIGNIN_THROTTLE_PER_ADDRESS = 4
    cache.clear()
    user = UserFactory()

    def sign_in(client_ip: str, username: str, password: str):
        client = Client(enforce_csrf_checks=True, REMOTE_ADDR=INGRESS, HTTP_X_FORWARDED_FOR=f"{client_ip}, {BALANCER}")
        page = client.get("/auth/login").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        return client.post("/auth/login", {"username": username, "password": password, "csrfmiddlewaretoken": token})

    for index in range(4):
        assert sign_in("203.0.113.66", f"guess{index}", "wrong password").status_code == 200

    assert sign_in("203.0.113.66", user.username, PASSWORD).status_code == 429  # the guesser is held
    assert sign_in("198.51.100.20", user.username, PASSWORD).status_code == 302  # everyone else is not


def test_no_other_module_reads_the_client_address():
    readers = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in {".venv", "var"} or "tests" in relative.parts or relative.parts[0] == "smoke":
            continue
        if relative == Path("core/client_address.py"):
            continue
        text = path.read_text()
        if "REMOTE_ADDR" in text or "HTTP_X_FORWARDED_FOR" in text:
            readers.append(str(relative))

    assert readers == []
