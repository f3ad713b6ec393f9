"""Bookings on the wire."""

from collections.abc import Mapping

from rest_framework import serializers

from core.serializers import ApiSerializer, CompactEventTypeSerializer, CompactUserSerializer
from scheduling.models import BookingStatus
from scheduling.serializers.schedules import TimeZoneField
from scheduling.slots import is_supported_instant


class InstantField(serializers.DateTimeField):
    """An ISO 8601 date-time with any offset, normalised to UTC; years 1900–9000."""

    def to_internal_value(self, value):
        instant = super().to_internal_value(value)
        if not is_supported_instant(instant):
            raise serializers.ValidationError("Must be between the years 1900 and 9000.")
        return instant


def _has_nul(value) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


class MetadataField(serializers.DictField):
    """A JSON object; NUL characters are refused (PostgreSQL's jsonb cannot store them)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if _has_nul(value):
            raise serializers.ValidationError("Must not contain NUL characters.")
        return value


class AttendeeSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True)
    time_zone = serializers.CharField(read_only=True)


class BookingSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    uid = serializers.CharField(read_only=True)
    user_id = serializers.IntegerField(source="organizer_id", read_only=True)
    user = CompactUserSerializer(source="organizer", read_only=True)
    event_type_id = serializers.IntegerField(read_only=True, allow_null=True)
    event_type = CompactEventTypeSerializer(read_only=True, allow_null=True)
    title = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    start_time = serializers.DateTimeField(read_only=True)
    end_time = serializers.DateTimeField(read_only=True)
    status = serializers.CharField(read_only=True)
    location = serializers.CharField(read_only=True)
    metadata = serializers.JSONField(read_only=True)
    attendees = AttendeeSerializer(source="attendee_rows", many=True, read_only=True)  # see booking_list
    cancellation_reason = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def get_cancellation_reason(self, booking) -> str | None:
        return booking.cancellation_reason or None


class V1ResponsesSerializer(ApiSerializer):
    """Cal.com v1's `responses` object: the booking form's answers."""

    name = serializers.CharField(max_length=200, required=False)
    email = serializers.EmailField(max_length=254, required=False)
    location = serializers.JSONField(required=False, help_text='A string, or {"value", "optionValue"}.')
    notes = serializers.CharField(required=False, allow_blank=True)

    def validate_location(self, value):
        if _has_nul(value):
            raise serializers.ValidationError("Must not contain NUL characters.")
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and set(value) <= {"value", "optionValue"}:
            parts = [value.get("optionValue"), value.get("value")]
            text = next((part for part in parts if isinstance(part, str) and part), "")
            if all(isinstance(part, str | None) for part in parts):
                return text
        raise serializers.ValidationError('Must be a string or {"value": ..., "optionValue": ...}.')


class BookingCreateSerializer(ApiSerializer):
    """The attendee is given by `name`/`email`/`timeZone`, or as Cal.com v1 clients send it, by
    `responses: {name, email, location, notes}` plus `timeZone` (and `language`, accepted and unused)."""

    event_type_id = serializers.IntegerField()
    start = InstantField(help_text="A slot's time as GET /slots lists it (any offset).")
    end = InstantField(required=False, help_text="If sent, must be start + the event type's length.")
    name = serializers.CharField(max_length=200, required=False, help_text="The attendee's name.")
    email = serializers.EmailField(max_length=254, required=False, help_text="The attendee's email.")
    time_zone = TimeZoneField(help_text="The attendee's IANA time zone.")
    title = serializers.CharField(max_length=500, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True)
    location = serializers.CharField(max_length=1000, required=False, allow_blank=True)
    metadata = MetadataField(required=False)
    responses = V1ResponsesSerializer(required=False, help_text="Cal.com v1 form answers.")
    language = serializers.CharField(max_length=16, required=False, help_text="Accepted for v1 clients; unused.")

    def to_internal_value(self, data):
        # Report a missing attendee together with the other field errors, not in a second round.
        errors, attrs = {}, None
        try:
            attrs = super().to_internal_value(data)
        except serializers.ValidationError as error:
            errors = dict(error.detail) if isinstance(error.detail, dict) else {"non_field_errors": error.detail}
        if isinstance(data, Mapping):
            responses = data.get("responses") if isinstance(data.get("responses"), Mapping) else {}
            for field in ("name", "email"):
                if field not in data and field not in responses and field not in errors:
                    errors[field] = ["This field is required."]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def validate(self, attrs):
        responses = attrs.pop("responses", {})
        attrs.pop("language", None)
        for field in ("name", "email", "location"):
            if field not in attrs and field in responses:
                attrs[field] = responses[field]
        if "description" not in attrs and responses.get("notes"):
            attrs["description"] = responses["notes"]
        missing = {field: ["This field is required."] for field in ("name", "email") if field not in attrs}
        if missing:
            raise serializers.ValidationError(missing)
        if len(attrs.get("location", "")) > 1000:
            raise serializers.ValidationError({"location": ["Ensure this field has no more than 1000 characters."]})
        return attrs


class BookingUpdateSerializer(ApiSerializer):
    """Either a reschedule (`startTime`, optional `endTime`) or a decision on a PENDING booking."""

    start_time = InstantField(required=False)
    end_time = InstantField(required=False)
    status = serializers.ChoiceField(
        choices=[BookingStatus.ACCEPTED, BookingStatus.REJECTED],
        required=False,
        help_text="ACCEPTED confirms, REJECTED rejects a PENDING booking. Cancel with DELETE /bookings/{id}/cancel.",
    )

    def validate(self, attrs):
        if "status" in attrs and ("start_time" in attrs or "end_time" in attrs):
            raise serializers.ValidationError({"status": ["Send either status or startTime, not both."]})
        if "end_time" in attrs and "start_time" not in attrs:
            raise serializers.ValidationError({"startTime": ["Required when endTime is sent."]})
        if not attrs:
            raise serializers.ValidationError({"non_field_errors": ["Send startTime to reschedule or status."]})
        return attrs


class BookingCancelSerializer(ApiSerializer):
    cancellation_reason = serializers.CharField(required=False, allow_blank=True, max_length=5000)
