"""Event types on the wire."""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.fastpath import reads
from core.serializers import ApiSerializer
from core.validators import ISO_4217_CURRENCIES, validate_currency
from scheduling.limits import COUNT, DURATION, KEYS, MAX_MINUTES, clean_limits
from scheduling.limits import MAX_COUNT as MAX_LIMIT_COUNT
from scheduling.recurrence import FREQUENCY_NAMES, MAX_COUNT, MAX_INTERVAL

MINUTES_PER_DAY = 24 * 60
MINUTES_PER_YEAR = 365 * MINUTES_PER_DAY
MAX_PRICE = 2**31 - 1


class RecurringEventSerializer(ApiSerializer):
    """Cal.com's `recurringEvent`: how often a booking of the event type repeats, and how many
    times at most (a booker may book fewer occurrences: `recurringCount`)."""

    freq = serializers.ChoiceField(
        choices=sorted(FREQUENCY_NAMES),
        help_text="Cal.com's numbering of iCalendar frequencies: 0 = yearly, 1 = monthly, 2 = weekly.",
    )
    interval = serializers.IntegerField(
        min_value=1, max_value=MAX_INTERVAL, help_text="Every `interval` weeks, months or years."
    )
    count = serializers.IntegerField(min_value=1, max_value=MAX_COUNT, help_text="Occurrences in a series, at most.")

    def to_internal_value(self, data):
        # Cal.com numbers the frequency; a name (or daily, which Cal.com does not offer) is refused.
        if isinstance(data, dict) and (isinstance(data.get("freq"), bool) or not isinstance(data.get("freq"), int)):
            if "freq" in data:
                raise serializers.ValidationError({"freq": ["Must be 0 (yearly), 1 (monthly) or 2 (weekly)."]})
        return super().to_internal_value(data)


SCHEDULING_TYPES = ("ROUND_ROBIN", "COLLECTIVE")


def _limits_schema(kind: str) -> dict:
    what = "bookings" if kind == COUNT else "minutes of bookings"
    return {
        "type": "object",
        "nullable": True,
        "additionalProperties": False,
        "properties": {
            key: {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT_COUNT if kind == COUNT else MAX_MINUTES[key]}
            for key in KEYS
        },
        "description": (
            f"At most this many {what} of the event type per calendar day, week (from Sunday), month or year "
            "in the host's time zone; a longer period's limit may not be below a shorter one's. null: none."
        ),
        "example": {"PER_DAY": 2, "PER_WEEK": 6} if kind == COUNT else {"PER_DAY": 120},
    }


class IntervalLimitsField(serializers.Field):
    """Cal.com v1's `bookingLimits` / `durationLimits`: `{"PER_DAY": 2, …}` or null
    (`scheduling.limits.clean_limits`)."""

    def __init__(self, *, kind: str, **kwargs):
        self.kind = kind
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if data == {}:
            return None
        try:
            return clean_limits(data, kind=self.kind)
        except ValueError as error:
            (errors,) = error.args
            if "" in errors:
                raise serializers.ValidationError([errors[""]]) from None
            raise serializers.ValidationError({key: [message] for key, message in errors.items()}) from None

    def to_representation(self, value):
        return value


@extend_schema_field(_limits_schema(COUNT))
class BookingLimitsField(IntervalLimitsField):
    def __init__(self, **kwargs):
        super().__init__(kind=COUNT, **kwargs)


@extend_schema_field(_limits_schema(DURATION))
class DurationLimitsField(IntervalLimitsField):
    def __init__(self, **kwargs):
        super().__init__(kind=DURATION, **kwargs)


class HostSerializer(ApiSerializer):
    """A host of a team event type (Cal.com v1's `hosts[]`)."""

    user_id = serializers.IntegerField(min_value=1, help_text="An accepted member of the event type's team.")
    is_fixed = serializers.BooleanField(
        required=False, default=False, help_text="Round robin: attends every booking, beside the assigned host."
    )
    priority = serializers.IntegerField(
        required=False, default=2, min_value=0, max_value=4, help_text="Round robin: 0 (lowest) to 4 (highest)."
    )
    weight = serializers.IntegerField(
        required=False, default=100, min_value=0, max_value=MAX_PRICE, help_text="Round robin: share of bookings."
    )


class EventTypeSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    user_id = serializers.IntegerField(source="owner_id", read_only=True, allow_null=True)
    team_id = serializers.IntegerField(read_only=True, allow_null=True)
    title = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    length = serializers.IntegerField(read_only=True)
    hidden = serializers.BooleanField(read_only=True)
    schedule_id = serializers.SerializerMethodField(
        help_text="The schedule its slots come from: its own, else (a user's event type) the owner's default."
    )
    price = serializers.IntegerField(read_only=True)
    currency = serializers.CharField(read_only=True)
    requires_confirmation = serializers.BooleanField(read_only=True)
    minimum_booking_notice = serializers.IntegerField(read_only=True)
    before_event_buffer = serializers.IntegerField(read_only=True)
    after_event_buffer = serializers.IntegerField(read_only=True)
    slot_interval = serializers.IntegerField(read_only=True, allow_null=True)
    recurring_event = serializers.SerializerMethodField(
        help_text="How a booking repeats (Cal.com's `recurringEvent`), or null for one-off meetings."
    )
    scheduling_type = serializers.SerializerMethodField(
        help_text="A team event type's use of its hosts: ROUND_ROBIN, COLLECTIVE, or null (one host)."
    )
    hosts = HostSerializer(many=True, read_only=True)
    assign_all_team_members = serializers.BooleanField(read_only=True)
    booking_limits = serializers.SerializerMethodField()
    duration_limits = serializers.SerializerMethodField()

    @extend_schema_field(_limits_schema(COUNT))
    @reads("booking_limits")
    def get_booking_limits(self, event_type) -> dict | None:
        return event_type.booking_limits

    @extend_schema_field(_limits_schema(DURATION))
    @reads("duration_limits")
    def get_duration_limits(self, event_type) -> dict | None:
        return event_type.duration_limits

    @extend_schema_field({"type": "string", "enum": list(SCHEDULING_TYPES), "nullable": True})
    @reads("scheduling_type")
    def get_scheduling_type(self, event_type) -> str | None:
        return event_type.scheduling_type or None

    @extend_schema_field(RecurringEventSerializer(allow_null=True))
    @reads("recurring_event")
    def get_recurring_event(self, event_type) -> dict | None:
        return event_type.recurring_event

    @reads("schedule_id", "team_id", "owner_id", "owner.default_schedule_id")
    def get_schedule_id(self, event_type) -> int | None:
        # Cal.com's v1 answered a personal event type without a schedule of its own with the owner's
        # default schedule, the one its slots are computed from; clients read `scheduleId` to find it.
        if event_type.schedule_id is not None or event_type.team_id is not None or event_type.owner_id is None:
            return event_type.schedule_id
        return event_type.owner.default_schedule_id


@extend_schema_field({"type": "string", "enum": sorted(ISO_4217_CURRENCIES), "example": "usd"})
class CurrencyField(serializers.CharField):
    """An ISO 4217 code from the real list (`AAA` is refused), stored and shown in lower case;
    `USD` is accepted as `usd` (only the letter case is normalised)."""

    def __init__(self, **kwargs):
        super().__init__(max_length=3, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data).lower()
        try:
            validate_currency(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        return value


class EventTypeCreateSerializer(ApiSerializer):
    title = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True)
    length = serializers.IntegerField(min_value=1, max_value=MINUTES_PER_DAY, help_text="Minutes.")
    hidden = serializers.BooleanField(required=False)
    schedule_id = serializers.IntegerField(required=False, allow_null=True)
    team_id = serializers.IntegerField(required=False, allow_null=True)
    user_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="The owner (system admins; anyone else only their own id). Admins must send userId or teamId.",
    )
    price = serializers.IntegerField(required=False, min_value=0, max_value=MAX_PRICE, help_text="Minor units.")
    currency = CurrencyField(required=False)
    requires_confirmation = serializers.BooleanField(required=False)
    minimum_booking_notice = serializers.IntegerField(required=False, min_value=0, max_value=MINUTES_PER_YEAR)
    before_event_buffer = serializers.IntegerField(required=False, min_value=0, max_value=MINUTES_PER_DAY)
    after_event_buffer = serializers.IntegerField(required=False, min_value=0, max_value=MINUTES_PER_DAY)
    slot_interval = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=MINUTES_PER_DAY)
    recurring_event = RecurringEventSerializer(
        required=False, allow_null=True, help_text="null (or absent) for one-off meetings."
    )
    scheduling_type = serializers.ChoiceField(
        choices=SCHEDULING_TYPES, required=False, allow_null=True, help_text="Team event types only."
    )
    hosts = HostSerializer(
        many=True, required=False, max_length=500, help_text="Replaces the whole list; team event types only."
    )
    assign_all_team_members = serializers.BooleanField(
        required=False, help_text="Every accepted member of the team, present and future, is a host."
    )
    booking_limits = BookingLimitsField(required=False, allow_null=True)
    duration_limits = DurationLimitsField(required=False, allow_null=True)


class EventTypeUpdateSerializer(EventTypeCreateSerializer):
    """Every field optional; the owner (`teamId`) cannot change."""

    title = serializers.CharField(max_length=200, required=False)
    slug = serializers.SlugField(max_length=200, required=False)
    length = serializers.IntegerField(min_value=1, max_value=MINUTES_PER_DAY, required=False)
    team_id = serializers.IntegerField(read_only=True)
    user_id = serializers.IntegerField(read_only=True)
