"""v1's shapes of connected calendars (Cal.com API v1: connected-calendars, selected-calendars,
destination-calendars, booking-references). No serializer has a field for a credential."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from calendars.models import INTEGRATION_TYPES
from core.fastpath import reads
from core.serializers import ApiSerializer

INTEGRATIONS = sorted(set(INTEGRATION_TYPES.values()))


class ConnectedCalendarEntrySerializer(ApiSerializer):
    external_id = serializers.CharField()
    name = serializers.CharField()
    primary = serializers.BooleanField()
    read_only = serializers.BooleanField()
    is_selected = serializers.BooleanField(help_text="This service's extension: its busy time blocks slots.")


class ConnectedCalendarSerializer(ApiSerializer):
    name = serializers.CharField()
    app_id = serializers.CharField()
    user_id = serializers.IntegerField()
    integration = serializers.CharField()
    credential_id = serializers.IntegerField(help_text="This service's extension.")
    healthy = serializers.BooleanField(help_text="This service's extension: the busy time read from it is current.")
    calendars = ConnectedCalendarEntrySerializer(many=True)


class SelectedCalendarSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True, help_text="The calendar's id (this service's extension).")
    user_id = serializers.IntegerField(source="connection.user_id", read_only=True)
    integration = serializers.SerializerMethodField()
    external_id = serializers.CharField(read_only=True)
    credential_id = serializers.IntegerField(source="connection_id", read_only=True)

    @extend_schema_field(OpenApiTypes.STR)
    @reads("connection.kind")
    def get_integration(self, calendar) -> str:
        return INTEGRATION_TYPES[calendar.connection.kind]


class SelectedCalendarInputSerializer(ApiSerializer):
    integration = serializers.ChoiceField(choices=INTEGRATIONS)
    external_id = serializers.CharField(max_length=1000)
    credential_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False)


class DestinationCalendarSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    integration = serializers.SerializerMethodField()
    external_id = serializers.CharField(source="calendar.external_id", read_only=True)
    user_id = serializers.IntegerField(read_only=True)
    event_type_id = serializers.SerializerMethodField()
    booking_id = serializers.SerializerMethodField()
    credential_id = serializers.IntegerField(source="calendar.connection_id", read_only=True)

    @extend_schema_field(OpenApiTypes.STR)
    @reads("calendar.connection.kind")
    def get_integration(self, destination) -> str:
        return INTEGRATION_TYPES[destination.calendar.connection.kind]

    @extend_schema_field({"type": "integer", "nullable": True})
    @reads("pk")
    def get_event_type_id(self, destination) -> None:
        return None  # one destination per user here; Cal.com's per-event-type ones are not offered

    @extend_schema_field({"type": "integer", "nullable": True})
    @reads("pk")
    def get_booking_id(self, destination) -> None:
        return None


class DestinationCalendarInputSerializer(ApiSerializer):
    integration = serializers.ChoiceField(choices=INTEGRATIONS)
    external_id = serializers.CharField(max_length=1000)


class BookingReferenceSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    type = serializers.CharField(read_only=True)
    uid = serializers.CharField(read_only=True)
    meeting_id = serializers.CharField(read_only=True)
    meeting_password = serializers.CharField(read_only=True)
    meeting_url = serializers.CharField(read_only=True)
    booking_id = serializers.IntegerField(read_only=True)
    external_calendar_id = serializers.CharField(read_only=True)
    deleted = serializers.BooleanField(read_only=True, allow_null=True)
    credential_id = serializers.IntegerField(source="connection_id", read_only=True, allow_null=True)


class BookingReferenceInputSerializer(ApiSerializer):
    type = serializers.CharField(max_length=50)
    uid = serializers.CharField(max_length=500)
    booking_id = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    meeting_id = serializers.CharField(max_length=500, required=False, allow_blank=True)
    meeting_password = serializers.CharField(max_length=500, required=False, allow_blank=True)
    meeting_url = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    external_calendar_id = serializers.CharField(max_length=1000, required=False, allow_blank=True)
    deleted = serializers.BooleanField(required=False, allow_null=True)


class BookingReferenceUpdateSerializer(BookingReferenceInputSerializer):
    type = serializers.CharField(max_length=50, required=False)
    uid = serializers.CharField(max_length=500, required=False)
    booking_id = None
