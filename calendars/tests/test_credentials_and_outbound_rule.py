"""Credentials are encrypted at rest (Fernet, rotatable) and never shown; every calendar request
passes the one outbound rule."""

from datetime import timedelta

import pytest
from cryptography.fernet import Fernet
from django.utils import timezone

from accounts.tests.factories import UserFactory
from calendars import crypto
from calendars.models import CalendarConnection, ConnectionKind
from calendars.services import connect_caldav, connect_ics_feed
from core.exceptions import ApplicationError

pytestmark = pytest.mark.django_db


def test_the_password_is_stored_encrypted_and_shown_nowhere(caldav_account, make_calendar):
    url, username, password = caldav_account
    make_calendar()
    connection = connect_caldav(
        user=UserFactory(), kind=ConnectionKind.CALDAV, url=url, username=username, password=password
    )
    stored = CalendarConnection.objects.values_list("credentials", flat=True).get(pk=connection.pk)
    assert password not in stored and username not in stored
    assert crypto.decrypt(stored) == {"url": url, "username": username, "password": password}
    assert password not in str(connection) and password not in repr(connection)


def test_rotation_old_tokens_still_read_and_rotate_to_the_new_key(settings):
    old_key = settings.CALENDARS["ENCRYPTION_KEYS"][0]
    token = crypto.encrypt({"password": "s3cret"})
    new_key = Fernet.generate_key().decode()
    settings.CALENDARS = {**settings.CALENDARS, "ENCRYPTION_KEYS": [new_key, old_key]}
    assert crypto.decrypt(token) == {"password": "s3cret"}
    rotated = crypto.rotate(token)
    settings.CALENDARS = {**settings.CALENDARS, "ENCRYPTION_KEYS": [new_key]}
    assert crypto.decrypt(rotated) == {"password": "s3cret"}
    with pytest.raises(crypto.CredentialsUnreadable):
        crypto.decrypt(token)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.1.2.3/dav/", "a private address"),
        ("http://169.254.169.254/latest/", "a cloud metadata address"),
        ("http://[::ffff:192.168.0.1]/", "a private address (IPv4-mapped)"),
        ("http://user:pw@127.0.0.1/", "must not contain credentials"),
        ("ftp://127.0.0.1/", "Only http and https"),
    ],
)
def test_calendar_urls_pass_the_outbound_rule_and_a_refusal_stores_nothing(url, reason):
    user = UserFactory()
    with pytest.raises(ApplicationError) as refused:
        connect_caldav(user=user, kind=ConnectionKind.CALDAV, url=url, username="a", password="b")
    assert reason in str(refused.value.detail)
    with pytest.raises(ApplicationError) as refused:
        connect_ics_feed(user=user, url=url)
    assert reason in str(refused.value.detail)
    assert not CalendarConnection.objects.exists()


def test_plain_http_needs_the_outbound_setting(settings):
    settings.OUTBOUND = {**settings.OUTBOUND, "ALLOW_HTTP": False}
    with pytest.raises(ApplicationError) as refused:
        connect_ics_feed(user=UserFactory(), url="http://127.0.0.1:9/feed.ics")
    assert "OUTBOUND_ALLOW_HTTP" in str(refused.value.detail)


def test_the_webhook_settings_keep_their_own_names(settings):
    """Webhooks read the same rule through their own setting names (aliases of OUTBOUND_*)."""
    from webhooks.ssrf import BlockedTarget, resolve_target

    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_HTTP": False}
    with pytest.raises(BlockedTarget, match="WEBHOOK_ALLOW_HTTP"):
        resolve_target("http://127.0.0.1/hook")


def test_the_rotate_command_re_encrypts_every_connection_with_the_first_key(settings):
    from django.core.management import call_command

    old_key = settings.CALENDARS["ENCRYPTION_KEYS"][0]
    connection = CalendarConnection.objects.create(
        user=UserFactory(), kind=ConnectionKind.ICS, credentials=crypto.encrypt({"url": "https://example.org/a.ics"})
    )
    new_key = Fernet.generate_key().decode()
    settings.CALENDARS = {**settings.CALENDARS, "ENCRYPTION_KEYS": [new_key, old_key]}
    call_command("rotate_calendar_keys")
    settings.CALENDARS = {**settings.CALENDARS, "ENCRYPTION_KEYS": [new_key]}
    connection.refresh_from_db()
    assert crypto.decrypt(connection.credentials) == {"url": "https://example.org/a.ics"}


def test_every_caldav_request_passes_the_rule_even_to_a_url_a_server_named(caldav_account):
    """A calendar URL (as a server's discovery answer could name it) on a refused address is never
    called, though the account's own server is allowed."""
    from calendars.providers import ProviderError, caldav_busy, caldav_put

    url, username, password = caldav_account
    secret = {"url": url, "username": username, "password": password}
    now = timezone.now()
    with pytest.raises(ProviderError, match="a private address"):
        caldav_busy(secret, "http://10.0.0.7/calendars/x/", start=now, end=now + timedelta(days=1), time_zone="UTC")
    with pytest.raises(ProviderError, match="a cloud metadata address"):
        caldav_put(secret, "http://169.254.169.254/latest/x.ics", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
