"""Schedules on the wire (docs/api.md, Schedules): inline availability rows and date overrides."""

from collections.abc import Mapping
from datetime import time

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.fastpath import reads
from core.limits import limit
from core.serializers import ApiSerializer, CompactEventTypeSerializer, CompactUserSerializer
from core.validators import validate_time_zone

TIME_INPUT_FORMATS = ["%H:%M", "%H:%M:%S"]
TIME_OUTPUT_FORMAT = "%H:%M:%S"
MIDNIGHT = time(0, 0)


class TimeZoneField(serializers.CharField):
    """An IANA zone name that means the same on every host (core.validators), taken exactly as
    sent (no trimming); the error names the bad value, not the list of every zone."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            validate_time_zone(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        return value


@extend_schema_field(
    {
        "type": "string",
        "pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$",
        "example": "09:00:00",
        "description": "Wall-clock time in the schedule's timeZone; HH:MM or HH:MM:SS in, HH:MM:SS out.",
    }
)
class WallClockTimeField(serializers.TimeField):
    def __init__(self, **kwargs):
        super().__init__(format=TIME_OUTPUT_FORMAT, input_formats=TIME_INPUT_FORMATS, **kwargs)

    def to_representation(self, value):
        # For a naive time `isoformat(timespec="seconds")` writes exactly TIME_OUTPUT_FORMAT, in about
        # half the time of DRF's strftime path; two per availability row were the largest part of
        # a schedule list's output.
        if isinstance(value, time) and value.tzinfo is None:
            return value.isoformat(timespec="seconds")
        return super().to_representation(value)


class AvailabilitySerializer(ApiSerializer):
    """A weekly rule (`days`, no `date`) or a date override (`date`, empty `days`)."""

    id = serializers.IntegerField(read_only=True)
    days = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=6), required=False, default=list, max_length=7
    )
    start_time = WallClockTimeField()
    end_time = WallClockTimeField()
    date = serializers.DateField(required=False, allow_null=True, default=None)

    def validate(self, attrs):
        days, override_date = attrs.get("days") or [], attrs.get("date")
        errors = {}
        if override_date is None and not days:
            errors["days"] = ["A weekly rule needs at least one day (0 = Sunday … 6 = Saturday)."]
        if override_date is not None and days:
            errors["days"] = ["A date override (with 'date') has no days."]
        if len(set(days)) != len(days):
            errors["days"] = ["A day appears more than once."]
        all_day_off = override_date is not None and attrs["start_time"] == MIDNIGHT == attrs["end_time"]
        if attrs["start_time"] >= attrs["end_time"] and not all_day_off:
            errors["endTime"] = ["Must be after startTime."]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class ScheduleSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    user_id = serializers.IntegerField(read_only=True)
    user = CompactUserSerializer(read_only=True)
    name = serializers.CharField(read_only=True)
    time_zone = serializers.CharField(read_only=True)
    is_default = serializers.SerializerMethodField()
    availability = AvailabilitySerializer(many=True, read_only=True)
    event_type = CompactEventTypeSerializer(source="event_types", many=True, read_only=True)

    @extend_schema_field(OpenApiTypes.BOOL)
    @reads("user.default_schedule_id", "pk")
    def get_is_default(self, schedule) -> bool:
        return schedule.user.default_schedule_id == schedule.pk


class BoundedAvailabilityMixin:
    """At most API_LIMITS["SCHEDULE_AVAILABILITY_ROWS"] rows, counted before any row is validated:
    each row costs validation now and work in every later GET /slots of the schedule."""

    def to_internal_value(self, data):
        rows = data.get("availability") if isinstance(data, Mapping) else None
        maximum = limit("SCHEDULE_AVAILABILITY_ROWS")
        if isinstance(rows, list) and len(rows) > maximum:
            raise serializers.ValidationError(
                {"availability": [f"A schedule may have at most {maximum} availability rows."]}
            )
        return super().to_internal_value(data)


class ScheduleCreateSerializer(BoundedAvailabilityMixin, ApiSerializer):
    name = serializers.CharField(max_length=200)
    time_zone = TimeZoneField()
    availability = AvailabilitySerializer(many=True, required=False, help_text="Default: Mon–Fri 09:00–17:00.")
    is_default = serializers.BooleanField(required=False, allow_null=True, default=None)
    user_id = serializers.IntegerField(required=False, help_text="System administrators only.")


class ScheduleUpdateSerializer(BoundedAvailabilityMixin, ApiSerializer):
    name = serializers.CharField(max_length=200, required=False)
    time_zone = TimeZoneField(required=False)
    availability = AvailabilitySerializer(many=True, required=False, help_text="Replaces the whole list.")
    is_default = serializers.BooleanField(required=False)
