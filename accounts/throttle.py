"""Sign-in throttle for /auth/login and the admin's login.

Failed attempts are counted with the API's sliding-window rate limiter (core.ratelimit, in Redis)
under two keys: the account named (SIGNIN_THROTTLE_PER_ACCOUNT failures per
SIGNIN_THROTTLE_WINDOW_SECONDS) and the client address (SIGNIN_THROTTLE_PER_ADDRESS). Once either
is spent, the form refuses every attempt on it, the right password included, without checking the
password, until the oldest failure leaves the window; the page says for how long. A successful
sign-in clears its account's failures. The same limiter rather than django-axes: no new
dependency, no table written on every failed attempt, and like the API's limit it fails open (Redis
unavailable: sign-in works, unthrottled) instead of locking everyone out.
"""

import hashlib
import ipaddress
import math

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm

from core import ratelimit
from core.client_address import client_address

KEY_PREFIX = "signin"


def address_group(address: str) -> str:
    """What the per-address count is kept for: the address itself for IPv4, its /64 for IPv6 (one
    client usually holds a whole /64 and can pick a fresh address in it for every attempt)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 4:
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


def signin_limits(request, username: str) -> list[tuple[str, int]]:
    """(key, failures allowed) for the account and the client address of one attempt."""
    account = _digest(username.strip().casefold())
    address = _digest(address_group(client_address(request)))
    return [
        (f"{KEY_PREFIX}:account:{account}", settings.SIGNIN_THROTTLE_PER_ACCOUNT),
        (f"{KEY_PREFIX}:address:{address}", settings.SIGNIN_THROTTLE_PER_ADDRESS),
    ]


def seconds_until_allowed(limits: list[tuple[str, int]]) -> int:
    """0 if one more attempt may be tried, else how long until it may."""
    window = settings.SIGNIN_THROTTLE_WINDOW_SECONDS
    waits = []
    for key, limit in limits:
        allowed, state = ratelimit.consume(key, limit, window=window, cost=0)
        if not allowed and state is not None:
            waits.append(state.reset)
    return max(waits, default=0)


def record_failure(limits: list[tuple[str, int]]) -> None:
    for key, limit in limits:
        ratelimit.consume(key, limit, window=settings.SIGNIN_THROTTLE_WINDOW_SECONDS)


def _wait_text(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


class ThrottledSignInMixin:
    """For an AuthenticationForm: refuse when the account or the address has too many recent
    failures, count a failed attempt, clear the account's count on success."""

    throttled_for = 0  # seconds until another attempt is allowed, when refused for that

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()
        limits = signin_limits(self.request, username)
        self.throttled_for = seconds_until_allowed(limits)
        if self.throttled_for:
            raise forms.ValidationError(
                "Too many failed sign-in attempts. Try again in %(wait)s.",
                code="throttled",
                params={"wait": _wait_text(self.throttled_for)},
            )
        try:
            cleaned_data = super().clean()
        except forms.ValidationError as error:
            if any(item.code == "invalid_login" for item in error.error_list):
                record_failure(limits)
            raise
        ratelimit.forget(limits[0][0])
        return cleaned_data


class ThrottledAuthenticationForm(ThrottledSignInMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottledSignInMixin, AdminAuthenticationForm):
    pass
