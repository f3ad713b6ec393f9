from datetime import timedelta

import factory
from django.utils import timezone

from notifications.models import EmailAttempt, EmailMessage, EventTypeNotifications, Reminder
from scheduling.tests.factories import BookingFactory, EventTypeFactory


class EmailMessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EmailMessage
        skip_postgeneration_save = True

    booking = factory.SubFactory(BookingFactory)
    organizer_id = factory.LazyAttribute(lambda message: message.booking.organizer_id)
    kind = "scheduled"
    role = "attendee"
    recipient = factory.Sequence(lambda n: f"recipient{n}@example.org")
    message_id = factory.Sequence(lambda n: f"<message-{n}@scheduling.test>")

    @factory.post_generation
    def attempt_log(message, create, extracted, **kwargs):
        """One failed attempt, unless `attempt_log=False`."""
        if create and extracted is not False:
            now = timezone.now()
            EmailAttempt.objects.create(
                message=message, started_at=now, finished_at=now, succeeded=False, error="SMTPConnectError"
            )


class ReminderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Reminder

    booking = factory.SubFactory(BookingFactory)
    minutes_before = 60
    to = "attendee"
    send_at = factory.LazyAttribute(lambda reminder: reminder.booking.start_time - timedelta(minutes=60))


class EventTypeNotificationsFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EventTypeNotifications

    event_type = factory.SubFactory(EventTypeFactory)
    reminders = factory.LazyFunction(lambda: [{"minutesBefore": 60, "to": "both"}])
