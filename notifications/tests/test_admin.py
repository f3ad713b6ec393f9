"""The back office shows the outbox with each message's attempts, read-only, and edits an event
type's mail settings through the service's rules."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from notifications.models import EmailAttempt, EventTypeNotifications
from notifications.tests.factories import EmailMessageFactory
from scheduling.tests.factories import EventTypeFactory

pytestmark = pytest.mark.django_db


def test_the_outbox_lists_messages_and_shows_their_attempts(operator_client):
    message = EmailMessageFactory(recipient="grace@example.org", attempts=1, attempt_log=False)
    now = timezone.now()
    EmailAttempt.objects.create(
        message=message, started_at=now, finished_at=now, succeeded=False, error="SMTPServerDisconnected: closed"
    )
    listed = operator_client.get("/admin/notifications/emailmessage/?status=pending")
    assert listed.status_code == 200 and b"grace@example.org" in listed.content
    shown = operator_client.get(f"/admin/notifications/emailmessage/{message.pk}/change/")
    assert shown.status_code == 200
    assert b"SMTPServerDisconnected: closed" in shown.content
    assert operator_client.get("/admin/notifications/emailmessage/add/").status_code == 403


def test_mail_settings_in_the_admin_keep_the_reminder_rules(operator_client):
    event_type = EventTypeFactory()
    url = "/admin/notifications/eventtypenotifications/add/"
    refused = operator_client.post(
        url, {"event_type": event_type.pk, "reminders": '[{"minutesBefore": 0}]'}, follow=False
    )
    assert refused.status_code == 200 and not EventTypeNotifications.objects.exists()
    saved = operator_client.post(
        url,
        {"event_type": event_type.pk, "disable_emails_to_hosts": "on", "reminders": '[{"minutesBefore": 30}]'},
    )
    assert saved.status_code == 302
    settings = EventTypeNotifications.objects.get()
    assert settings.disable_emails_to_hosts and settings.reminders == [{"minutesBefore": 30, "to": "attendee"}]


def test_the_outbox_is_searched_by_whole_message_id(operator_client):
    """An exact match, read from the Message-ID's unique index (no LIKE copy of it is kept)."""
    wanted = EmailMessageFactory(message_id="<0123abcd@scheduling.test>", attempt_log=False)
    other = EmailMessageFactory(message_id="<0123abcdef@scheduling.test>", recipient="other@example.org")
    found = operator_client.get("/admin/notifications/emailmessage/", {"q": wanted.message_id})
    assert found.status_code == 200
    assert wanted.recipient.encode() in found.content and other.recipient.encode() not in found.content


def test_a_message_id_is_unique_in_the_outbox():
    message = EmailMessageFactory(attempt_log=False)
    with pytest.raises(IntegrityError, match="email_message_id_unique"), transaction.atomic():
        EmailMessageFactory(message_id=message.message_id, attempt_log=False)
