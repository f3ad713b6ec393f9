"""Connected calendars: a connection (CalDAV server, Apple iCloud, ICS feed, Google Calendar,
Microsoft 365) with its secret
encrypted (`credentials`, calendars.crypto), the calendars found there, which of them block slots
(selected), where bookings are written (destination), the busy time read from them, the events
written for bookings (booking references) and the outbox of those writes."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class ConnectionKind(models.TextChoices):
    CALDAV = "caldav", "CalDAV"
    APPLE = "apple", "Apple iCloud (CalDAV)"
    ICS = "ics", "ICS feed"
    GOOGLE = "google", "Google Calendar"
    OFFICE365 = "office365", "Microsoft 365 (Outlook)"


# Connected through OAuth 2.0 and read through the provider's own API (calendars.oauth).
OAUTH_KINDS = (ConnectionKind.GOOGLE, ConnectionKind.OFFICE365)


# Cal.com's integration type of each kind, as its API shows it.
INTEGRATION_TYPES = {
    ConnectionKind.CALDAV: "caldav_calendar",
    ConnectionKind.APPLE: "apple_calendar",
    ConnectionKind.ICS: "ics-feed_calendar",
    ConnectionKind.GOOGLE: "google_calendar",
    ConnectionKind.OFFICE365: "office365_calendar",
}

# Cal.com's app of each kind: its title and its slug (`appId`).
APP_TITLES = {
    ConnectionKind.CALDAV: "CalDav Server",
    ConnectionKind.APPLE: "Apple Calendar",
    ConnectionKind.ICS: "ICS Feed",
    ConnectionKind.GOOGLE: "Google Calendar",
    ConnectionKind.OFFICE365: "Outlook Calendar",
}
APP_SLUGS = {
    ConnectionKind.CALDAV: "caldav-calendar",
    ConnectionKind.APPLE: "apple-calendar",
    ConnectionKind.ICS: "ics-feed",
    ConnectionKind.GOOGLE: "google-calendar",
    ConnectionKind.OFFICE365: "office365-calendar",
}


class CalendarConnection(models.Model):
    """Cal.com's calendar credential. `credentials` is a Fernet token of {url, username, password}
    (an ICS feed: {url}, whose address is itself the secret; Google and Microsoft 365: the OAuth
    tokens, calendars.oauth.tokens); never shown, never logged."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calendar_connections")
    kind = models.CharField(max_length=10, choices=ConnectionKind.choices)
    # What a person may be shown: the server's host and the account name, never the secret.
    label = models.CharField(max_length=300, blank=True)
    credentials = models.TextField(editable=False)
    invalid = models.BooleanField(default=False)
    etag = models.CharField(max_length=300, blank=True, editable=False)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.CheckConstraint(condition=Q(kind__in=ConnectionKind.values), name="calendar_kind_valid")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.label} ({self.user_id})"

    def __repr__(self) -> str:
        return f"<CalendarConnection {self.pk} {self.kind}>"

    @property
    def integration(self) -> str:
        return INTEGRATION_TYPES[self.kind]


class ExternalCalendar(models.Model):
    connection = models.ForeignKey(CalendarConnection, on_delete=models.CASCADE, related_name="calendars")
    # The calendar's URL on a CalDAV server; for a feed, a name that does not reveal the feed's URL.
    external_id = models.CharField(max_length=1000)
    name = models.CharField(max_length=300, blank=True)
    # The zone that all-day events and floating times are read in.
    time_zone = models.CharField(max_length=64, default="UTC")
    read_only = models.BooleanField(default=False)
    is_selected = models.BooleanField(default=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["connection", "external_id"], name="calendar_external_id_unique")
        ]

    def __str__(self) -> str:
        return self.name or self.external_id


class DestinationCalendar(models.Model):
    """Where the user's bookings are written (one per user)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="destination_calendar")
    calendar = models.ForeignKey(ExternalCalendar, on_delete=models.CASCADE, related_name="destinations")

    def __str__(self) -> str:
        return f"{self.calendar} ({self.user_id})"


class BusyTime(models.Model):
    """Busy time read from a selected calendar, replaced whole at each successful read; kept as it
    was when a read fails."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    calendar = models.ForeignKey(ExternalCalendar, on_delete=models.CASCADE, related_name="busy_times")
    start = models.DateTimeField()
    end = models.DateTimeField()
    # The event's UID: the service's own events (booking references) never block.
    event_uid = models.CharField(max_length=500, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "start"], name="busy_user_start")]
        constraints = [models.CheckConstraint(condition=Q(end__gt=F("start")), name="busy_ends_after_start")]

    def __str__(self) -> str:
        return f"{self.start:%Y-%m-%d %H:%M}–{self.end:%H:%M} UTC"


class BookingReference(models.Model):
    """An event this service wrote for a booking (Cal.com's booking reference)."""

    booking = models.ForeignKey("scheduling.Booking", on_delete=models.CASCADE, related_name="references")
    type = models.CharField(max_length=50)
    # The event's UID (the booking's iCalUID, kept across reschedules).
    uid = models.CharField(max_length=500)
    calendar = models.ForeignKey(ExternalCalendar, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    connection = models.ForeignKey(
        CalendarConnection, null=True, blank=True, on_delete=models.SET_NULL, related_name="references"
    )
    external_calendar_id = models.CharField(max_length=1000, blank=True)
    # The event's resource on the server, and the SEQUENCE last written there.
    href = models.CharField(max_length=2000, blank=True)
    sequence = models.PositiveIntegerField(default=0)
    meeting_id = models.CharField(max_length=500, blank=True)
    meeting_password = models.CharField(max_length=500, blank=True)
    meeting_url = models.CharField(max_length=2000, blank=True)
    deleted = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["uid"], name="booking_reference_uid")]

    def __str__(self) -> str:
        return f"{self.type} {self.uid}"


class WriteAction(models.TextChoices):
    PUT = "put", "write the event"
    DELETE = "delete", "remove the event"


class CalendarWrite(models.Model):
    """The outbox of event writes: one row per booking change, in the same transaction as the
    change; a worker applies it and retries until done. Writing is idempotent (the event's resource
    name is its UID), so a retry after an unknown outcome never doubles the event."""

    booking = models.ForeignKey("scheduling.Booking", on_delete=models.CASCADE, related_name="calendar_writes")
    action = models.CharField(max_length=6, choices=WriteAction.choices)
    done_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    due_at = models.DateTimeField()
    last_error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["due_at"], condition=Q(done_at__isnull=True), name="calendar_write_due"),
        ]

    def __str__(self) -> str:
        return f"{self.action} for booking {self.booking_id}"


class FeedVariant(models.TextChoices):
    FULL = "full", "every detail"
    BUSY = "busy", "busy time only"


class CalendarFeed(models.Model):
    """A secret address where a calendar app subscribes to the user's bookings (calendars.feeds).
    Only the SHA-256 of its token is stored: the address is shown once, when it is made or
    rotated. One per user and variant; deleting the row revokes the address."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calendar_feeds")
    variant = models.CharField(max_length=4, choices=FeedVariant.choices)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "variant"], name="calendar_feed_user_variant_unique"),
            models.CheckConstraint(condition=Q(variant__in=FeedVariant.values), name="calendar_feed_variant_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_variant_display()} feed of {self.user_id}"
