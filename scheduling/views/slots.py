from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.exceptions import NotFound
from core.limits import limit
from core.query import Boolean, Instant, Integer, QueryParameters, TimeZone
from core.scopes import READ_BOOKING
from core.viewsets import ResourceViewSet
from scheduling.selectors.event_types import event_type_bookable
from scheduling.selectors.slots import available_slots, slots_with_hosts
from scheduling.services.recurring import checked_count


class SlotQuery(QueryParameters):
    """GET /slots (docs/scheduling.md); `startTime` and `endTime` without an offset are in `timeZone`."""

    event_type_id = Integer(minimum=1, required=True)
    time_zone = TimeZone(default="UTC", description="IANA zone for grouping and offsets.")
    start_time = Instant(zone_from="time_zone", required=True, description="ISO 8601 date-time or date.")
    end_time = Instant(
        zone_from="time_zone", end=True, required=True, description="ISO 8601 date-time or date (inclusive)."
    )
    recurring_count = Integer(
        minimum=1,
        description="A recurring event type: only starts whose series of this many occurrences is free "
        "(default: the event type's `recurringEvent.count`).",
    )
    include_hosts = Boolean(
        default=False,
        description="This service's extension: each slot also lists `hosts`, who is free then (a round-robin "
        "event type's assignable hosts, a collective one's hosts, a personal one's owner). Not with recurringCount.",
    )


class SlotHostSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    username = serializers.CharField()
    timeZone = serializers.CharField()


class SlotSerializer(serializers.Serializer):
    time = serializers.CharField(help_text="ISO 8601 date-time with the offset of `timeZone` (`Z` in UTC).")
    hosts = SlotHostSerializer(many=True, required=False, help_text="With includeHosts=true only.")


# One object for the whole answer although `list` is the action: without many=False the OpenAPI
# document would promise an array.
@extend_schema_serializer(many=False)
class SlotsSerializer(serializers.Serializer):
    slots = serializers.DictField(
        child=serializers.ListField(child=SlotSerializer()),
        help_text="Free slots by day (`YYYY-MM-DD` in `timeZone`).",
    )


class SlotViewSet(ResourceViewSet):
    query_refers_to_objects = True  # an absent or hidden `eventTypeId` is a 404 (documented so)
    """Free slots of an event type, grouped by day in the requested time zone."""

    scopes = {"GET": READ_BOOKING}
    pagination_class = None

    list_filters = SlotQuery  # not filters, but read and documented the same way
    filters_by_user = False

    @extend_schema(responses=SlotsSerializer)
    def list(self, request, *args, **kwargs):
        query = self.list_filters.parse(request)
        event_type_id, time_zone = query["event_type_id"], query["time_zone"]
        start, end = query["start_time"], query["end_time"]
        if end <= start:
            raise ValidationError({"endTime": ["Must be after startTime."]})
        max_days = limit("SLOTS_MAX_DAYS")
        if end - start > timedelta(days=max_days):
            raise ValidationError({"endTime": [f"The range may span at most {max_days} days."]})
        event_type = event_type_bookable(user=request.user, event_type_id=event_type_id)
        if event_type is None:
            raise NotFound(f"Event type {event_type_id} does not exist.")
        recurring_count = query["recurring_count"]
        if recurring_count is not None:
            checked_count(event_type, recurring_count)
        if query["include_hosts"]:
            if recurring_count is not None:
                raise ValidationError({"includeHosts": ["Not with recurringCount."]})
            slots = slots_with_hosts(
                event_type=event_type, range_start=start, range_end=end, time_zone=time_zone, now=timezone.now()
            )
            return Response({"slots": slots})
        slots = available_slots(
            event_type=event_type,
            range_start=start,
            range_end=end,
            time_zone=time_zone,
            now=timezone.now(),
            recurring_count=recurring_count,
        )
        return Response({"slots": slots})
