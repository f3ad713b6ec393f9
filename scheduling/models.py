import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower

from accounts.models import validate_time_zone

ALL_DAYS_MASK = 0b1111111


class Schedule(models.Model):
    """A named block of availability; its rules are wall-clock times in `time_zone`."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="schedules")
    name = models.CharField(max_length=200)
    time_zone = models.CharField(max_length=64, validators=[validate_time_zone])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [GinIndex(OpClass(Lower("name"), name="gin_trgm_ops"), name="schedule_name_trgm")]

    def __str__(self):
        return self.name


class Availability(models.Model):
    """A weekly rule (`days_mask` set, no `date`) or a date override (`date` set, no days).

    Days are a bit mask (bit 0 = Sunday … bit 6 = Saturday) so that "days within 0–6" and
    "no duplicate days" hold in the database itself, on every backend. An override whose
    start and end are both midnight means "unavailable that day".
    """

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="availability")
    days_mask = models.PositiveSmallIntegerField(default=0)
    start_time = models.TimeField()
    end_time = models.TimeField()
    date = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "availability"
        constraints = [
            models.CheckConstraint(condition=Q(days_mask__lte=ALL_DAYS_MASK), name="availability_days_in_week"),
            models.CheckConstraint(
                condition=(Q(date__isnull=True) & Q(days_mask__gt=0)) | (Q(date__isnull=False) & Q(days_mask=0)),
                name="availability_weekly_or_override",
            ),
            models.CheckConstraint(
                condition=Q(start_time__lt=F("end_time"))
                | (Q(date__isnull=False) & Q(start_time="00:00") & Q(end_time="00:00")),
                name="availability_start_before_end",
            ),
        ]
        indexes = [models.Index(fields=["schedule", "date"], name="availability_schedule_date")]

    def __str__(self):
        when = self.date.isoformat() if self.date else ",".join(map(str, self.days))
        return f"{when} {self.start_time:%H:%M}-{self.end_time:%H:%M}"

    @property
    def days(self) -> list[int]:
        return Availability.days_of(self.days_mask)

    @staticmethod
    def days_of(mask: int) -> list[int]:
        """The days (0 = Sunday … 6 = Saturday) of a `days_mask`."""
        return [day for day in range(7) if mask & (1 << day)]

    @staticmethod
    def mask_for(days) -> int:
        mask = 0
        for day in days:
            mask |= 1 << day
        return mask


class SchedulingType(models.TextChoices):
    """How a team event type uses its hosts (Cal.com's `schedulingType`)."""

    COLLECTIVE = "COLLECTIVE"  # every host attends: a time is offered when all of them are free
    ROUND_ROBIN = "ROUND_ROBIN"  # one round-robin host is assigned, plus every fixed host


class EventType(models.Model):
    """Something that can be booked; owned by exactly one user or one team."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="event_types"
    )
    team = models.ForeignKey(
        "accounts.Team", null=True, blank=True, on_delete=models.CASCADE, related_name="event_types"
    )
    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200)
    description = models.TextField(blank=True)
    length = models.PositiveIntegerField(help_text="Minutes.")
    schedule = models.ForeignKey(Schedule, null=True, blank=True, on_delete=models.SET_NULL, related_name="event_types")
    price = models.PositiveIntegerField(default=0, help_text="Minor units (cents).")
    currency = models.CharField(max_length=3, default="usd")
    requires_confirmation = models.BooleanField(default=False)
    hidden = models.BooleanField(default=False)
    minimum_booking_notice = models.PositiveIntegerField(default=120, help_text="Minutes.")
    before_event_buffer = models.PositiveIntegerField(default=0, help_text="Minutes.")
    after_event_buffer = models.PositiveIntegerField(default=0, help_text="Minutes.")
    slot_interval = models.PositiveIntegerField(null=True, blank=True, help_text="Minutes; defaults to length.")
    # Cal.com's `recurringEvent`: {"freq": 0|1|2 (yearly, monthly, weekly), "interval": 1-20, "count":
    # 1-24}, or null for a one-off meeting (scheduling.recurrence).
    recurring_event = models.JSONField(null=True, blank=True)
    # A team event type's hosts (`Host`, scheduling.hosts): empty for a personal event type, and for a
    # team event type whose one host is the owner of its schedule.
    scheduling_type = models.CharField(max_length=11, choices=SchedulingType.choices, blank=True, default="")
    # Every accepted member of the team is a host, present and future (Cal.com's `assignAllTeamMembers`).
    assign_all_team_members = models.BooleanField(default=False)
    # Cal.com's `bookingLimits` and `durationLimits` (minutes): {"PER_DAY": 2, "PER_WEEK": 5, …}, any of
    # PER_DAY, PER_WEEK, PER_MONTH, PER_YEAR, or null for none (scheduling.limits).
    booking_limits = models.JSONField(null=True, blank=True)
    duration_limits = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(owner__isnull=False, team__isnull=True) | Q(owner__isnull=True, team__isnull=False),
                name="event_type_one_owner",
            ),
            models.CheckConstraint(
                condition=Q(scheduling_type="") | Q(scheduling_type__in=SchedulingType.values, team__isnull=False),
                name="event_type_scheduling_type_of_team",
            ),
            models.CheckConstraint(condition=Q(length__gt=0), name="event_type_length_positive"),
            models.CheckConstraint(
                condition=Q(slot_interval__isnull=True) | Q(slot_interval__gt=0), name="event_type_interval_positive"
            ),
            models.CheckConstraint(condition=Q(currency__regex=r"^[a-z]{3}$"), name="event_type_currency_iso"),
            models.UniqueConstraint(
                fields=["owner", "slug"], condition=Q(owner__isnull=False), name="event_type_owner_slug_unique"
            ),
            models.UniqueConstraint(
                fields=["team", "slug"], condition=Q(team__isnull=False), name="event_type_team_slug_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["hidden"], name="event_type_hidden"),
            GinIndex(OpClass(Lower("title"), name="gin_trgm_ops"), name="event_type_title_trgm"),
        ]

    def __str__(self):
        return self.title


DEFAULT_HOST_PRIORITY = 2
DEFAULT_HOST_WEIGHT = 100


class Host(models.Model):
    """A member of a team event type's team who is booked through it (Cal.com's `Host`).

    Tied to the membership: when the member leaves the team (the membership is deleted), the row
    goes with it. `priority` 0 (lowest) … 4 (highest) and `weight` steer round-robin assignment;
    a fixed host (`is_fixed`) attends every booking of a round-robin event type."""

    event_type = models.ForeignKey(EventType, on_delete=models.CASCADE, related_name="hosts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    membership = models.ForeignKey("accounts.Membership", on_delete=models.CASCADE, related_name="+")
    is_fixed = models.BooleanField(default=False)
    priority = models.PositiveSmallIntegerField(default=DEFAULT_HOST_PRIORITY)
    weight = models.PositiveIntegerField(default=DEFAULT_HOST_WEIGHT)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["event_type", "user"], name="host_event_type_user_unique"),
            models.CheckConstraint(condition=Q(priority__lte=4), name="host_priority_range"),
        ]
        indexes = [models.Index(fields=["user"], name="host_user")]

    def __str__(self):
        return f"{self.user_id} hosts {self.event_type_id}"


class BookingStatus(models.TextChoices):
    ACCEPTED = "ACCEPTED"
    PENDING = "PENDING"
    CANCELLED = "CANCELLED"
    REJECTED = "REJECTED"


def new_booking_uid() -> str:
    return uuid.uuid4().hex


class Booking(models.Model):
    uid = models.CharField(max_length=64, unique=True, default=new_booking_uid, editable=False)
    # Indexed by `booking_organizer_order` and `booking_event_type_order` (each key, then the id): a
    # second index on the key alone let PostgreSQL read a branch of a list in the key's order and
    # sort it whole, which it took for cheap (Meta.indexes).
    organizer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bookings", db_index=False
    )
    event_type = models.ForeignKey(
        EventType, null=True, blank=True, on_delete=models.SET_NULL, related_name="bookings", db_index=False
    )
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    start_time = models.DateTimeField()
    end_time = models.DateTimeField()
    status = models.CharField(max_length=9, choices=BookingStatus.choices, default=BookingStatus.ACCEPTED)
    location = models.CharField(max_length=1000, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    cancellation_reason = models.TextField(blank=True)
    rescheduled_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rescheduled_to"
    )
    # True on a booking that was cancelled because it was moved (its successor points back to it
    # through `rescheduled_from`), as Cal.com marks it.
    rescheduled = models.BooleanField(default=False)
    cancelled_by = models.EmailField(max_length=254, blank=True)
    # What the booker answered on the booking form, keyed by field name (Cal.com's `responses`).
    responses = models.JSONField(default=dict, blank=True)
    custom_inputs = models.JSONField(default=dict, blank=True)
    sms_reminder_number = models.CharField(max_length=50, blank=True)
    # Bumped each time the booking's calendar event changes (iCalendar SEQUENCE).
    ical_sequence = models.PositiveIntegerField(default=0)
    # The calendar event's UID (Cal.com's `iCalUID`) when it is not the booking's own
    # `<uid>@Cal.com`: a booking made by rescheduling another keeps the first booking's, as Cal.com
    # does (`core.ical.ical_uid` reads it).
    ical_uid = models.CharField(max_length=255, blank=True, default="")
    # Shared by every occurrence of a recurring series (Cal.com's `recurringEventId`); empty for a
    # one-off booking.
    recurring_event_id = models.CharField(max_length=100, blank=True, default="")
    # The organizer did not show up (Cal.com's `noShowHost`), set after the meeting has started.
    no_show_host = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(end_time__gt=F("start_time")), name="booking_ends_after_start"),
            models.CheckConstraint(condition=Q(status__in=BookingStatus.values), name="booking_status_valid"),
        ]
        indexes = [
            models.Index(fields=["organizer", "start_time"], name="booking_organizer_start"),
            # A visibility branch in each order a list offers (scheduling.selectors.bookings.
            # booking_visibility): by id, v1's `sortBy` (created, updated), v2's sorts (start, end,
            # created), the id last (rows alike in the order's column, as a bulk import's, are read
            # in the list's order too); the organizer's start is `booking_organizer_start` above.
            models.Index(fields=["organizer", "id"], name="booking_organizer_order"),
            models.Index(fields=["event_type", "id"], name="booking_event_type_order"),
            models.Index(fields=["event_type", "start_time"], name="booking_event_type_start"),
            models.Index(fields=["organizer", "end_time", "id"], name="booking_organizer_end"),
            models.Index(fields=["event_type", "end_time", "id"], name="booking_event_type_end"),
            models.Index(fields=["organizer", "created_at", "id"], name="booking_organizer_created"),
            models.Index(fields=["event_type", "created_at", "id"], name="booking_event_type_created"),
            models.Index(fields=["organizer", "updated_at", "id"], name="booking_organizer_updated"),
            models.Index(fields=["event_type", "updated_at", "id"], name="booking_event_type_updated"),
            models.Index(fields=["status"], name="booking_status"),
            models.Index(fields=["start_time"], name="booking_start"),
            models.Index(fields=["end_time"], name="booking_end"),
            models.Index(
                fields=["recurring_event_id", "start_time"],
                condition=~Q(recurring_event_id=""),
                name="booking_recurring_series",
            ),
            GinIndex(OpClass(Lower("title"), name="gin_trgm_ops"), name="booking_title_trgm"),
        ]

    def __str__(self):
        return f"{self.title} ({self.uid})"


class BookingHost(models.Model):
    """A host of a team booking besides its organizer: every other host of a collective event type,
    the fixed hosts of a round-robin one (Cal.com's `team.members`). Their time is busy like the
    organizer's while the booking is ACCEPTED or PENDING."""

    booking = models.ForeignKey(Booking, on_delete=models.CASCADE, related_name="team_hosts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["booking", "user"], name="booking_host_unique")]
        indexes = [models.Index(fields=["user", "booking"], name="booking_host_user")]

    def __str__(self):
        return f"{self.user_id} on {self.booking_id}"


class Attendee(models.Model):
    booking = models.ForeignKey(Booking, on_delete=models.CASCADE, related_name="attendees")
    name = models.CharField(max_length=200)
    email = models.EmailField(max_length=254)
    time_zone = models.CharField(max_length=64, validators=[validate_time_zone])
    locale = models.CharField(max_length=35, default="en")
    # The attendee did not show up (Cal.com's `noShow`), set after the meeting has started.
    no_show = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["email"], name="attendee_email"),
            models.Index(OpClass(Lower("email"), name="text_pattern_ops"), name="attendee_email_lower_prefix"),
        ]

    def __str__(self):
        return f"{self.name} <{self.email}>"
