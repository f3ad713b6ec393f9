"""Beat's purge deletes finished messages and sent reminders past the retention, and never a
message still to be sent."""

from datetime import timedelta

import pytest
from django.utils import timezone

from notifications.models import EmailAttempt, EmailMessage, EmailStatus, Reminder
from notifications.sending import purge_finished
from notifications.tests.factories import EmailMessageFactory, ReminderFactory

pytestmark = pytest.mark.django_db


def test_the_purge_keeps_pending_and_recent_messages(settings):
    settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "RETENTION_SECONDS": 3600, "PURGE_BATCH_SIZE": 2}
    old = timezone.now() - timedelta(hours=2)
    finished = [EmailMessageFactory(status=status) for status in (EmailStatus.SENT, EmailStatus.FAILED, "sent")]
    waiting = EmailMessageFactory(status=EmailStatus.PENDING)
    recent = EmailMessageFactory(status=EmailStatus.SENT)
    EmailMessage.objects.filter(pk__in=[m.pk for m in [*finished, waiting]]).update(created_at=old)
    sent_reminder = ReminderFactory(sent_at=old)
    due_reminder = ReminderFactory(send_at=old)

    assert purge_finished() == 3
    assert set(EmailMessage.objects.values_list("pk", flat=True)) == {waiting.pk, recent.pk}
    assert set(EmailAttempt.objects.values_list("message_id", flat=True)) == {waiting.pk, recent.pk}
    assert list(Reminder.objects.values_list("pk", flat=True)) == [due_reminder.pk]
    assert sent_reminder.pk not in Reminder.objects.values_list("pk", flat=True)
