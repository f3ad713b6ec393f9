import re
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.datetimes import is_supported_instant
from core.exceptions import NotFound
from core.limits import limit
from core.query import query_int, single
from core.scopes import READ_BOOKING
from core.validators import validate_time_zone
from core.viewsets import ResourceViewSet
from scheduling.selectors.event_types import event_type_bookable
from scheduling.selectors.slots import available_slots

UNENCODED_PLUS_OFFSET = re.compile(r"(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$")


def query_time_zone(request, name: str, default: str) -> str:
    value = single(request, name)
    if value is None:
        return default
    try:
        validate_time_zone(value)
    except DjangoValidationError as error:
        raise ValidationError({name: error.messages}) from None
    return value


def query_instant(request, name: str, *, zone: str = "UTC", end: bool = False, required: bool = False):
    """An ISO 8601 date-time (any offset; none means `zone`) or a date (its start in `zone`, or for
    an `end` parameter the start of the next day, so that the whole date is included)."""
    raw = single(request, name, required=required)
    if raw is None:
        return None
    # An unencoded "+01:00" arrives as " 01:00" (a "+" in a query string is a space).
    raw = UNENCODED_PLUS_OFFSET.sub(r"\1+\2", raw)
    try:
        # A bare date first: parse_datetime would read "2026-11-23" as its midnight.
        day = parse_date(raw)
        value = None if day is not None else parse_datetime(raw)
    except ValueError:
        value = day = None
    if value is None and day is None:
        raise ValidationError({name: [f"'{raw}' is not an ISO 8601 date or date-time."]})
    try:
        if day is not None:
            value = datetime.combine(day + timedelta(days=1) if end else day, time(0))
        if timezone.is_naive(value):
            value = value.replace(tzinfo=ZoneInfo(zone))
        value = value.astimezone(UTC)
    except OverflowError:
        value = None
    if value is None or not is_supported_instant(value):
        raise ValidationError({name: [f"'{raw}' is outside the supported years 1900–9000."]})
    return value


class SlotSerializer(serializers.Serializer):
    time = serializers.CharField(help_text="ISO 8601 date-time with the offset of `timeZone` (`Z` in UTC).")


# One object for the whole answer although `list` is the action: without many=False the OpenAPI
# document would promise an array.
@extend_schema_serializer(many=False)
class SlotsSerializer(serializers.Serializer):
    slots = serializers.DictField(
        child=serializers.ListField(child=SlotSerializer()),
        help_text="Free slots by day (`YYYY-MM-DD` in `timeZone`).",
    )


class SlotViewSet(ResourceViewSet):
    """Free slots of an event type, grouped by day in the requested time zone."""

    scopes = {"GET": READ_BOOKING}
    pagination_class = None

    @extend_schema(
        parameters=[
            OpenApiParameter("eventTypeId", int, required=True),
            OpenApiParameter("startTime", str, required=True, description="ISO 8601 date-time or date."),
            OpenApiParameter("endTime", str, required=True, description="ISO 8601 date-time or date (inclusive)."),
            OpenApiParameter("timeZone", str, description="IANA zone for grouping and offsets; default UTC."),
        ],
        responses=SlotsSerializer,
    )
    def list(self, request, *args, **kwargs):
        event_type_id = query_int(request, "eventTypeId", required=True, minimum=1)
        time_zone = query_time_zone(request, "timeZone", "UTC")
        start = query_instant(request, "startTime", zone=time_zone, required=True)
        end = query_instant(request, "endTime", zone=time_zone, end=True, required=True)
        if end <= start:
            raise ValidationError({"endTime": ["Must be after startTime."]})
        max_days = limit("SLOTS_MAX_DAYS")
        if end - start > timedelta(days=max_days):
            raise ValidationError({"endTime": [f"The range may span at most {max_days} days."]})
        event_type = event_type_bookable(user=request.user, event_type_id=event_type_id)
        if event_type is None:
            raise NotFound(f"Event type {event_type_id} does not exist.")
        slots = available_slots(
            event_type=event_type, range_start=start, range_end=end, time_zone=time_zone, now=timezone.now()
        )
        return Response({"slots": slots})
