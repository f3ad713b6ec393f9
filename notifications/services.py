"""Writes on an event type's mail settings (the admin calls these)."""

from django.core.exceptions import ValidationError
from django.db import transaction

from notifications.models import EventTypeNotifications, ReminderTarget

# A week: reminders further ahead than that are not what an attendee expects from a scheduler.
MAX_MINUTES_BEFORE = 7 * 24 * 60
MAX_REMINDERS = 5


def clean_reminders(reminders) -> list[dict]:
    """`[{"minutesBefore": 1..10080, "to": "attendee" | "organizer" | "both"}]`, at most five, no
    two alike; a ValidationError names the first that is not."""
    if not isinstance(reminders, list):
        raise ValidationError({"reminders": "A list of {minutesBefore, to} objects."})
    if len(reminders) > MAX_REMINDERS:
        raise ValidationError({"reminders": f"At most {MAX_REMINDERS} reminders."})
    cleaned, seen = [], set()
    for index, reminder in enumerate(reminders):
        if not isinstance(reminder, dict) or set(reminder) - {"minutesBefore", "to"}:
            raise ValidationError({f"reminders[{index}]": "Only minutesBefore and to."})
        minutes, to = reminder.get("minutesBefore"), reminder.get("to", ReminderTarget.ATTENDEE)
        if not isinstance(minutes, int) or isinstance(minutes, bool) or not 1 <= minutes <= MAX_MINUTES_BEFORE:
            raise ValidationError({f"reminders[{index}].minutesBefore": f"Whole minutes, 1 to {MAX_MINUTES_BEFORE}."})
        if to not in ReminderTarget.values:
            raise ValidationError({f"reminders[{index}].to": f"One of {', '.join(ReminderTarget.values)}."})
        if (minutes, to) in seen:
            raise ValidationError({f"reminders[{index}]": "Listed twice."})
        seen.add((minutes, to))
        cleaned.append({"minutesBefore": minutes, "to": to})
    return cleaned


@transaction.atomic
def event_type_mail_settings_set(
    *,
    event_type,
    disable_emails_to_attendees: bool | None = None,
    disable_emails_to_hosts: bool | None = None,
    reminders=None,
) -> EventTypeNotifications:
    """Change what the event type's bookings send (a value left None stays as it is): Cal.com v2's
    `emailSettings` switches, for integrations that mail attendees or hosts themselves, and the
    reminders. Bookings already made keep the reminders they were given; new bookings and
    reschedules take the new rules."""
    settings, _ = EventTypeNotifications.objects.get_or_create(event_type_id=event_type.pk)
    if disable_emails_to_attendees is not None:
        settings.disable_emails_to_attendees = disable_emails_to_attendees
    if disable_emails_to_hosts is not None:
        settings.disable_emails_to_hosts = disable_emails_to_hosts
    if reminders is not None:
        settings.reminders = clean_reminders(list(reminders))
    settings.save()
    return settings


def event_type_mail_settings(event_type) -> dict:
    """The settings as the API shows them (an event type without a row has the defaults)."""
    settings = EventTypeNotifications.objects.filter(event_type_id=event_type.pk).first()
    return mail_settings_output(settings)


def mail_settings_output(settings: EventTypeNotifications | None) -> dict:
    return {
        "emailSettings": {
            "disableEmailsToAttendees": bool(settings and settings.disable_emails_to_attendees),
            "disableEmailsToHosts": bool(settings and settings.disable_emails_to_hosts),
        },
        "reminders": list(settings.reminders) if settings is not None else [],
    }
