"""The e-mail outbox (one row per message and recipient, written in the booking's transaction), its
attempts, the calendar identity of each booking (iCalendar UID and SEQUENCE), reminders due, and an
event type's mail settings. See docs/notifications.md."""

from django.db import models
from django.db.models import Q


class Kind(models.TextChoices):
    SCHEDULED = "scheduled"  # accepted: the attendee's confirmation, the organizer's notice
    REQUESTED = "requested"  # needs confirmation: "request received" / "a request to decide"
    CONFIRMED = "confirmed"  # a request accepted by the host
    REJECTED = "rejected"  # a request declined by the host
    RESCHEDULED = "rescheduled"
    CANCELLED = "cancelled"
    REMINDER = "reminder"


class Role(models.TextChoices):
    ATTENDEE = "attendee"
    GUEST = "guest"
    ORGANIZER = "organizer"


class EmailStatus(models.TextChoices):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"  # refused for good (a permanent SMTP error) or out of attempts


class Invitation(models.Model):
    """The calendar event a booking is, as the invitations carry it: the UID stays the same across
    reschedules (a reschedule's new booking inherits its predecessor's) and for every occurrence of
    a series; SEQUENCE goes up with each change sent."""

    booking = models.OneToOneField(
        "scheduling.Booking", on_delete=models.CASCADE, primary_key=True, related_name="invitation"
    )
    ical_uid = models.CharField(max_length=255)
    sequence = models.PositiveIntegerField(default=0)
    # An occurrence of a series: its start as first booked (the iCalendar RECURRENCE-ID).
    recurrence_id = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.ical_uid} #{self.sequence}"


class EmailMessage(models.Model):
    """One message to one recipient. `context` is what the message says, taken when the change was
    made, so that the worker renders what was true then; `message_id` is derived from the change and
    the recipient, and is unique: the same change never queues a second message to the same person."""

    booking = models.ForeignKey(
        "scheduling.Booking", null=True, blank=True, on_delete=models.SET_NULL, related_name="email_messages"
    )
    # A user id: bigint, as the users table's. Not indexed: nothing reads messages by organizer (the
    # bound counts in Redis), and every message would pay for the index.
    organizer_id = models.BigIntegerField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    role = models.CharField(max_length=10, choices=Role.choices)
    recipient = models.EmailField(max_length=254)
    locale = models.CharField(max_length=35, default="en")
    time_zone = models.CharField(max_length=64, default="UTC")
    context = models.JSONField(default=dict)
    message_id = models.CharField(max_length=255)
    status = models.CharField(max_length=10, choices=EmailStatus.choices, default=EmailStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # A constraint, not `unique=True`: that would add a `varchar_pattern_ops` copy of the
            # index for LIKE lookups, which nothing makes, and every message would pay for it.
            models.UniqueConstraint(fields=["message_id"], name="email_message_id_unique"),
        ]
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=Q(status="pending"), name="email_pending_due"),
            # The retention purge: finished messages, oldest first.
            models.Index(fields=["created_at"], condition=~Q(status="pending"), name="email_finished_created"),
        ]

    def __str__(self):
        return f"{self.kind} to {self.recipient}"


class EmailAttempt(models.Model):
    message = models.ForeignKey(EmailMessage, on_delete=models.CASCADE, related_name="attempt_log")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    succeeded = models.BooleanField()
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{'sent' if self.succeeded else 'failed'} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class ReminderTarget(models.TextChoices):
    ATTENDEE = "attendee"
    ORGANIZER = "organizer"
    BOTH = "both"


class EventTypeNotifications(models.Model):
    """An event type's mail settings; an event type without a row sends every message and no
    reminders. The switches are Cal.com v2's `emailSettings` (`disableEmailsToAttendees`,
    `disableEmailsToHosts`); `reminders`: [{"minutesBefore": 60, "to": "attendee" | "organizer" |
    "both"}], this service's own."""

    event_type = models.OneToOneField(
        "scheduling.EventType", on_delete=models.CASCADE, primary_key=True, related_name="notification_settings"
    )
    disable_emails_to_attendees = models.BooleanField(default=False)
    disable_emails_to_hosts = models.BooleanField(default=False)
    reminders = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name = "event type mail settings"
        verbose_name_plural = "event type mail settings"

    def __str__(self):
        return f"mail settings of event type {self.event_type_id}"


class Reminder(models.Model):
    """A reminder due at `send_at`; beat turns it into messages (`sent_at`). Stored, so that it
    survives restarts; a reschedule or a cancel deletes the booking's unsent ones."""

    booking = models.ForeignKey("scheduling.Booking", on_delete=models.CASCADE, related_name="reminders")
    minutes_before = models.PositiveIntegerField()
    to = models.CharField(max_length=10, choices=ReminderTarget.choices)
    send_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["send_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["booking", "minutes_before", "to"], name="reminder_once_per_booking"),
        ]
        indexes = [models.Index(fields=["send_at"], condition=Q(sent_at__isnull=True), name="reminder_due")]

    def __str__(self):
        return f"{self.minutes_before} min before booking {self.booking_id} to {self.to}"
