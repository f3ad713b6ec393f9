"""GET /slots/why-not: whether one start of an event type is bookable and, per host, which rule
removes it (this service's extension; scheduling.selectors.why_not)."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response

from core.datetimes import iso_utc
from core.exceptions import NotFound
from core.query import Instant, Integer, QueryParameters, TimeZone
from core.scopes import READ_BOOKING
from core.viewsets import ResourceViewSet
from scheduling.selectors.event_types import event_type_bookable
from scheduling.selectors.why_not import RULES, why_not


class WhyNotQuery(QueryParameters):
    event_type_id = Integer(minimum=1, required=True)
    time_zone = TimeZone(default="UTC", description="The zone of `start` when it has no offset.")
    start = Instant(zone_from="time_zone", required=True, description="The start to explain (ISO 8601).")


class WhyNotReasonSerializer(serializers.Serializer):
    rule = serializers.ChoiceField(choices=RULES)
    detail = serializers.CharField()


class WhyNotHostSerializer(serializers.Serializer):
    userId = serializers.IntegerField()
    isFixed = serializers.BooleanField(help_text="Attends every booking (collective hosts and fixed hosts).")
    free = serializers.BooleanField()
    reasons = WhyNotReasonSerializer(many=True, help_text="Empty when the host is free then.")


@extend_schema_serializer(many=False)
class WhyNotSerializer(serializers.Serializer):
    eventTypeId = serializers.IntegerField()
    start = serializers.DateTimeField()
    bookable = serializers.BooleanField(help_text="Whether GET /slots offers this start.")
    schedulingType = serializers.ChoiceField(choices=["ROUND_ROBIN", "COLLECTIVE"], allow_null=True)
    reasons = WhyNotReasonSerializer(many=True, help_text="What removes it for the event type as a whole.")
    hosts = WhyNotHostSerializer(many=True)


def explain(request, query) -> dict:
    """The why-not answer for the caller (an event type they may book, else 404)."""
    event_type = event_type_bookable(user=request.user, event_type_id=query["event_type_id"])
    if event_type is None:
        raise NotFound(f"Event type {query['event_type_id']} does not exist.")
    answer = why_not(event_type=event_type, start=query["start"], now=timezone.now())
    return {**answer, "start": iso_utc(answer["start"])}


class WhyNotViewSet(ResourceViewSet):
    """Why a start is not bookable, host by host: `schedule`, `booking`, `buffer`, `calendar`,
    `notice`, `interval` (off the slot grid) or `limit`."""

    query_refers_to_objects = True
    scopes = {"GET": READ_BOOKING}
    pagination_class = None
    list_filters = WhyNotQuery
    filters_by_user = False

    @extend_schema(responses=WhyNotSerializer)
    def list(self, request, *args, **kwargs):
        return Response(explain(request, self.list_filters.parse(request)))
