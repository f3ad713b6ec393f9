"""Bookings on the wire."""

from rest_framework import serializers

from core.serializers import ApiSerializer, CompactEventTypeSerializer, CompactUserSerializer
from scheduling.models import BookingStatus
from scheduling.serializers.schedules import TimeZoneField


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
    attendees = AttendeeSerializer(many=True, read_only=True)
    cancellation_reason = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def get_cancellation_reason(self, booking) -> str | None:
        return booking.cancellation_reason or None


class BookingCreateSerializer(ApiSerializer):
    event_type_id = serializers.IntegerField()
    start = serializers.DateTimeField(help_text="A slot's time as GET /slots lists it (any offset).")
    end = serializers.DateTimeField(required=False, help_text="If sent, must be start + the event type's length.")
    name = serializers.CharField(max_length=200, help_text="The attendee's name.")
    email = serializers.EmailField(max_length=254, help_text="The attendee's email.")
    time_zone = TimeZoneField(help_text="The attendee's IANA time zone.")
    title = serializers.CharField(max_length=500, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True)
    location = serializers.CharField(max_length=1000, required=False, allow_blank=True)
    metadata = serializers.DictField(required=False)


class BookingUpdateSerializer(ApiSerializer):
    """Either a reschedule (`startTime`, optional `endTime`) or a decision on a PENDING booking."""

    start_time = serializers.DateTimeField(required=False)
    end_time = serializers.DateTimeField(required=False)
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
