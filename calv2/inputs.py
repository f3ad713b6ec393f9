"""v2 request bodies. Cal.com validates them with `whitelist: true`: a field it does not know is
dropped, not refused. Everything it does know is validated here as strictly as v1's bodies are
(JSON types as sent, bounded strings and JSON, IANA zones, e-mail addresses); the domain rules
(slots, SSRF, templates, who may do what) stay in the services."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from accounts.models import WeekDay, validate_time_zone
from core.serializers import (
    BoundedJSONField,
    CamelCaseMixin,
    StrictScalarsMixin,
    WholeItemsMixin,
)
from scheduling.limits import COUNT, DURATION, clean_limits
from scheduling.limits import UNITS as LIMIT_UNITS
from scheduling.limits import V2_KEYS as V2_LIMIT_KEYS
from scheduling.recurrence import FREQUENCY_NAMES, MAX_COUNT, MAX_INTERVAL
from scheduling.serializers.bookings import GuestsField, InstantField, StrictIntegerField
from scheduling.services.booking_requests import refuse_unsupported
from scheduling.services.bookings import MAX_ATTENDEES
from webhooks.models import WebhookTrigger


class V2Input(WholeItemsMixin, StrictScalarsMixin, CamelCaseMixin, serializers.Serializer):
    """camelCase on the wire, strict scalars, unknown keys dropped (no `StrictFieldsMixin`)."""


class TimeZoneField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=64, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            validate_time_zone(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        return value


class RefusedField(serializers.Field):
    """A field Cal.com knows for a feature this service does not have, where dropping it would do
    something else than the client asked: any value is a 400 with `message`."""

    def __init__(self, message: str, **kwargs):
        self.message = message
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        raise serializers.ValidationError(self.message)


# --- webhooks ---------------------------------------------------------------------------------


class WebhookCreateInput(V2Input):
    """Cal.com's `CreateWebhookInputDto`: `active`, `subscriberUrl` and `triggers` are required."""

    active = serializers.BooleanField()
    subscriber_url = serializers.CharField(max_length=2048)
    triggers = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookTrigger.values), allow_empty=False, max_length=64
    )
    payload_template = serializers.CharField(max_length=65536, allow_blank=True, allow_null=True, required=False)
    secret = serializers.CharField(max_length=256, allow_blank=True, allow_null=True, required=False)


class WebhookUpdateInput(WebhookCreateInput):
    """Cal.com's `UpdateWebhookInputDto`: every field optional."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


# --- bookings ---------------------------------------------------------------------------------


class AttendeeInput(V2Input):
    name = serializers.CharField(max_length=200)
    email = serializers.EmailField(max_length=254)
    time_zone = TimeZoneField()
    phone_number = serializers.CharField(max_length=50, required=False)
    language = serializers.CharField(max_length=35, required=False)


# Cal.com's names of its video integrations in a booking's location (`integrations:daily` is Cal
# Video), by the slug its v2 input takes.
INTEGRATION_LOCATIONS = {
    "cal-video": "integrations:daily",
    "google-meet": "integrations:google:meet",
    "office365-video": "integrations:office365_video",
    "zoom": "integrations:zoom",
    "whereby-video": "integrations:whereby_video",
    "whatsapp-video": "integrations:whatsapp_video",
    "webex-video": "integrations:webex_video",
    "telegram-video": "integrations:telegram_video",
    "tandem": "integrations:tandem",
    "skype-video": "integrations:skype_video",
    "signal-video": "integrations:signal_video",
}


class LocationField(serializers.Field):
    """Cal.com 2024-08-13 takes a location as a string or as an object with `type` and the
    type's value (`address`, `link`, `phone`, …); stored as the text a person reads. A video
    integration (`{"type": "integration", "integration": "zoom"}`) is stored under Cal.com's name
    for it (`integrations:zoom`), since this service makes no meeting links; the organizer's default
    app (`{"type": "organizersDefaultApp"}`) is no location here, as organizers have no apps."""

    def to_internal_value(self, data):
        if isinstance(data, str) and len(data) <= 1000:
            return data
        if isinstance(data, dict) and data.get("type") == "integration":
            if data.get("integration") not in INTEGRATION_LOCATIONS:
                raise serializers.ValidationError(f"integration must be one of {', '.join(INTEGRATION_LOCATIONS)}.")
            return INTEGRATION_LOCATIONS[data["integration"]]
        if isinstance(data, dict) and data.get("type") == "organizersDefaultApp":
            return ""
        if isinstance(data, dict) and isinstance(data.get("type"), str):
            for key in ("address", "link", "phone", "location", "value"):
                if isinstance(data.get(key), str) and len(data[key]) <= 1000:
                    return data[key]
            return data["type"][:1000]
        raise serializers.ValidationError('Must be a string (at most 1000 characters) or {"type": ..., ...}.')

    def to_representation(self, value):
        return value


class BookingCreateInput(V2Input):
    """Cal.com's `CreateBookingInput_2024_08_13` with its instant and recurring variants. The event
    type is named by `eventTypeId`, or by `eventTypeSlug` with `username` or `teamSlug`. Fields
    asking for what this service does not do (`instant`, `allowConflicts`,
    `allowBookingOutOfBounds`, `organizationSlug`) are refused by name
    (`scheduling.services.booking_requests.refuse_unsupported`)."""

    start = InstantField()
    # A JSON number, as class-validator's @IsInt.
    event_type_id = StrictIntegerField(min_value=1, max_value=2**31 - 1, required=False)
    event_type_slug = serializers.CharField(max_length=200, required=False)
    username = serializers.CharField(max_length=200, required=False)
    team_slug = serializers.CharField(max_length=200, required=False)
    organization_slug = serializers.CharField(max_length=200, required=False, allow_blank=True, allow_null=True)
    attendee = AttendeeInput()
    guests = GuestsField(required=False)
    location = LocationField(required=False)
    meeting_url = serializers.CharField(max_length=1000, required=False, help_text="Cal.com's older `location`.")
    metadata = BoundedJSONField(required=False)
    booking_fields_responses = BoundedJSONField(required=False)
    length_in_minutes = serializers.IntegerField(min_value=1, max_value=1440, required=False)
    recurrence_count = StrictIntegerField(min_value=1, max_value=1000, required=False)
    reservation_uid = serializers.CharField(
        max_length=64,
        required=False,
        help_text="The uid of a slot reservation (POST /v2/slots/reservations) holding this slot: the "
        "booking takes the slot it holds, and the reservation is freed.",
    )
    instant = serializers.BooleanField(required=False)
    allow_conflicts = serializers.BooleanField(required=False)
    allow_booking_out_of_bounds = serializers.BooleanField(required=False)

    def validate(self, attrs):
        refuse_unsupported(
            {
                "instant": attrs.pop("instant", None),
                "allowConflicts": attrs.pop("allow_conflicts", None),
                "allowBookingOutOfBounds": attrs.pop("allow_booking_out_of_bounds", None),
                "organizationSlug": attrs.pop("organization_slug", None),
            }
        )
        return attrs


class BookingCancelInput(V2Input):
    """Cal.com's `CancelBookingInput_2024_08_13`, and its seated variant's `seatUid`, which names a
    seat of a seated booking: this service has none, so no uid names one (a 400, rather than
    cancelling the whole booking for a client that meant one seat)."""

    cancellation_reason = serializers.CharField(max_length=5000, allow_blank=True, required=False)
    cancel_subsequent_bookings = serializers.BooleanField(required=False)
    seat_uid = RefusedField("No seat has this uid: this service has no seated bookings.", required=False)


class BookingRescheduleInput(V2Input):
    start = InstantField()
    rescheduling_reason = serializers.CharField(max_length=5000, allow_blank=True, required=False)


class BookingDeclineInput(V2Input):
    reason = serializers.CharField(max_length=5000, allow_blank=True, required=False)


class AbsentAttendeeInput(V2Input):
    email = serializers.EmailField(max_length=254)
    absent = serializers.BooleanField()


class MarkAbsentInput(V2Input):
    """Cal.com's `MarkAbsentBookingInput_2024_08_13`: `host` and `attendees` are both optional,
    `attendees` has at least one item."""

    host = serializers.BooleanField(required=False)
    attendees = serializers.ListField(
        child=AbsentAttendeeInput(), required=False, allow_empty=False, max_length=MAX_ATTENDEES
    )


# Cal.com's `AddAttendeeInput_2024_08_13` is the booking's attendee (`name`, `email`, `timeZone`,
# `phoneNumber`, `language`).
AddAttendeeInput = AttendeeInput


# --- me ---------------------------------------------------------------------------------------


class MeUpdateInput(V2Input):
    """Cal.com's `UpdateManagedUserInput` fields that this service's users have."""

    name = serializers.CharField(max_length=200, allow_blank=True, required=False)
    email = serializers.EmailField(max_length=254, required=False)
    bio = serializers.CharField(max_length=5000, allow_blank=True, required=False)
    avatar_url = serializers.URLField(max_length=2048, allow_blank=True, required=False)
    time_zone = TimeZoneField(required=False)
    week_start = serializers.ChoiceField(choices=WeekDay.values, required=False)
    time_format = serializers.ChoiceField(choices=[12, 24], required=False)
    locale = serializers.CharField(max_length=16, required=False)
    default_schedule_id = StrictIntegerField(min_value=1, required=False)


# --- event types ------------------------------------------------------------------------------

MINUTES_PER_DAY = 1440
MINUTES_PER_YEAR = 525_600


class RecurrenceInput(V2Input):
    """Cal.com's `Recurrence_2024_06_14`: `{frequency, interval, occurrences}`, stored as v1's
    `recurringEvent` (`{freq, interval, count}`) with v1's limits."""

    frequency = serializers.ChoiceField(choices=list(FREQUENCY_NAMES.values()))
    interval = serializers.IntegerField(min_value=1, max_value=MAX_INTERVAL)
    occurrences = serializers.IntegerField(min_value=1, max_value=MAX_COUNT)

    def run_validation(self, data=serializers.empty):
        # Cal.com's way to turn recurrence off in an update: `{"disabled": true}`.
        if isinstance(data, dict) and data.get("disabled") is True:
            return None
        return super().run_validation(data)

    def validate(self, attrs):
        frequency = {name: number for number, name in FREQUENCY_NAMES.items()}[attrs["frequency"]]
        return {"freq": frequency, "interval": attrs["interval"], "count": attrs["occurrences"]}


class EmailSettingsInput(V2Input):
    """Cal.com's `EmailSettings_2024_06_14`: turn off the standard e-mails to one side."""

    disable_emails_to_attendees = serializers.BooleanField(required=False)
    disable_emails_to_hosts = serializers.BooleanField(required=False)


class _IntervalLimitsInput(V2Input):
    """Cal.com's `BookingLimitsCount_2024_06_14` / `BookingLimitsDuration_2024_06_14`: `{day, week,
    month, year}`, stored as v1's `{"PER_DAY": …}`; `{"disabled": true}` turns the limits off."""

    kind = COUNT
    day = serializers.IntegerField(required=False)
    week = serializers.IntegerField(required=False)
    month = serializers.IntegerField(required=False)
    year = serializers.IntegerField(required=False)
    disabled = serializers.BooleanField(required=False)

    def run_validation(self, data=serializers.empty):
        if isinstance(data, dict) and data.get("disabled") is True:
            return None
        return super().run_validation(data)

    def validate(self, attrs):
        attrs.pop("disabled", None)
        try:
            return clean_limits({V2_LIMIT_KEYS[unit]: value for unit, value in attrs.items()}, kind=self.kind)
        except ValueError as error:
            (errors,) = error.args
            by_unit = {LIMIT_UNITS.get(key, key): [message] for key, message in errors.items()}
            raise serializers.ValidationError(by_unit) from None


class BookingLimitsCountInput(_IntervalLimitsInput):
    kind = COUNT


class BookingLimitsDurationInput(_IntervalLimitsInput):
    kind = DURATION


class EventTypeCreateInput(V2Input):
    """Cal.com's `CreateEventTypeInput_2024_06_14`, for the settings this service has, and this
    service's `reminders` (docs/notifications.md)."""

    length_in_minutes = serializers.IntegerField(min_value=1, max_value=MINUTES_PER_DAY)
    title = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=200)
    description = serializers.CharField(max_length=10000, allow_blank=True, required=False)
    hidden = serializers.BooleanField(required=False)
    schedule_id = serializers.IntegerField(min_value=1, allow_null=True, required=False)
    price = serializers.IntegerField(min_value=0, max_value=10**8, required=False)
    currency = serializers.RegexField(r"^[a-zA-Z]{3}$", required=False)
    requires_confirmation = serializers.BooleanField(required=False)
    minimum_booking_notice = serializers.IntegerField(min_value=0, max_value=MINUTES_PER_YEAR, required=False)
    before_event_buffer = serializers.IntegerField(min_value=0, max_value=MINUTES_PER_DAY, required=False)
    after_event_buffer = serializers.IntegerField(min_value=0, max_value=MINUTES_PER_DAY, required=False)
    slot_interval = serializers.IntegerField(min_value=1, max_value=MINUTES_PER_DAY, allow_null=True, required=False)
    recurrence = RecurrenceInput(allow_null=True, required=False)
    booking_limits_count = BookingLimitsCountInput(allow_null=True, required=False)
    booking_limits_duration = BookingLimitsDurationInput(allow_null=True, required=False)
    email_settings = EmailSettingsInput(required=False)
    # Checked whole by the service (`notifications.services.clean_reminders`).
    reminders = serializers.ListField(child=serializers.JSONField(), required=False, max_length=5)

    def validate_currency(self, value):
        return value.lower()


class EventTypeUpdateInput(EventTypeCreateInput):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


# --- schedules --------------------------------------------------------------------------------

WEEKDAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


class WallTimeField(serializers.TimeField):
    def __init__(self, **kwargs):
        super().__init__(input_formats=["%H:%M", "%H:%M:%S"], **kwargs)


class WeeklyAvailabilityInput(V2Input):
    days = serializers.ListField(child=serializers.ChoiceField(choices=WEEKDAY_NAMES), allow_empty=False, max_length=7)
    start_time = WallTimeField()
    end_time = WallTimeField()


class OverrideInput(V2Input):
    date = serializers.DateField(input_formats=["%Y-%m-%d"])
    start_time = WallTimeField()
    end_time = WallTimeField()


class ScheduleCreateInput(V2Input):
    """Cal.com's `CreateScheduleInput_2024_06_11`: `isDefault` is required there too."""

    name = serializers.CharField(max_length=200)
    time_zone = TimeZoneField()
    is_default = serializers.BooleanField()
    availability = WeeklyAvailabilityInput(many=True, required=False, max_length=100)
    overrides = OverrideInput(many=True, required=False, max_length=400)


class ScheduleUpdateInput(ScheduleCreateInput):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)
