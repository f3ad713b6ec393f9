from rest_framework import serializers

from core.serializers import ApiSerializer
from scheduling.serializers.bookings import AttendeeSerializer, StrictIntegerField
from scheduling.serializers.schedules import TimeZoneField


class V1AttendeeSerializer(AttendeeSerializer):
    """Cal.com v1's attendee (`schemaAttendeeReadPublic`), plus the locale."""

    booking_id = serializers.IntegerField(read_only=True)


class AttendeeCreateSerializer(ApiSerializer):
    booking_id = StrictIntegerField(min_value=1, max_value=2**63 - 1)
    email = serializers.EmailField(max_length=254)
    name = serializers.CharField(max_length=200)
    time_zone = TimeZoneField()


class AttendeeUpdateSerializer(ApiSerializer):
    email = serializers.EmailField(max_length=254, required=False)
    name = serializers.CharField(max_length=200, required=False)
    time_zone = TimeZoneField(required=False)
