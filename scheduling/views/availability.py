"""GET /availability (Cal.com v1): a user's or a team's members' working hours, date overrides,
busy time and free ranges between two instants, in one call. The answer is the bare object (or,
for a team, the bare list) as Cal.com v1 answered it."""

from datetime import timedelta

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.selectors import managed_team_ids, team_list
from core.exceptions import Forbidden, NotFound
from core.limits import limit
from core.query import Instant, Integer, QueryParameters
from core.scopes import READ_SCHEDULE
from core.viewsets import ResourceViewSet, integer_lookup
from scheduling.selectors.availability import availability_subject, team_members_availability, user_availability


class AvailabilityQuery(QueryParameters):
    """Cal.com v1's parameters: one of `userId` and `teamId`, and the range."""

    user_id = Integer(minimum=1, description="The user whose availability to read.")
    team_id = Integer(minimum=1, description="A team: every accepted member's (team admins and owners).")
    date_from = Instant(required=True, description="ISO 8601 date-time or date (UTC when no offset).")
    date_to = Instant(end=True, required=True, description="ISO 8601 date-time or date (inclusive).")
    event_type_id = Integer(minimum=1, description="Accepted for Cal.com v1 clients; changes nothing.")


class AvailabilityRangeSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


class AvailabilityWorkingHoursSerializer(serializers.Serializer):
    days = serializers.ListField(child=serializers.IntegerField(), help_text="0 = Sunday … 6 = Saturday.")
    startTime = serializers.IntegerField(help_text="Minutes after midnight, wall clock in `timeZone`.")
    endTime = serializers.IntegerField(help_text="Minutes after midnight (1440: the end of the day).")
    userId = serializers.IntegerField()


class AvailabilityDateOverrideSerializer(serializers.Serializer):
    date = serializers.DateField()
    startTime = serializers.IntegerField(help_text="Minutes after midnight; 0 and 0: unavailable that day.")
    endTime = serializers.IntegerField()
    userId = serializers.IntegerField()


@extend_schema_serializer(many=False)  # one object, although `list` is the action (as GET /slots)
class UserAvailabilitySerializer(serializers.Serializer):
    busy = AvailabilityRangeSerializer(many=True, help_text="Busy periods (bookings widened by their buffers), merged.")
    timeZone = serializers.CharField(help_text="The zone of the working hours: the default schedule's.")
    dateRanges = AvailabilityRangeSerializer(
        many=True, help_text="Free time: the schedule's windows without busy time."
    )
    workingHours = AvailabilityWorkingHoursSerializer(many=True)
    dateOverrides = AvailabilityDateOverrideSerializer(many=True)
    currentSeats = serializers.IntegerField(allow_null=True, help_text="Always null (no seated events).")


class MemberAvailabilitySerializer(serializers.Serializer):
    userId = serializers.IntegerField()
    availability = UserAvailabilitySerializer()


def _range(query) -> tuple:
    start, end = query["date_from"], query["date_to"]
    if end <= start:
        raise ValidationError({"dateTo": ["Must be after dateFrom."]})
    max_days = limit("SLOTS_MAX_DAYS")
    if end - start > timedelta(days=max_days):
        raise ValidationError({"dateTo": [f"The range may span at most {max_days} days."]})
    return start, end


def _user_answer(caller, user_id: int, start, end) -> Response:
    user = availability_subject(caller=caller, user_id=user_id)
    if user is None:
        raise NotFound(f"User {user_id} does not exist.")
    return Response(user_availability(user=user, date_from=start, date_to=end))


class AvailabilityViewSet(ResourceViewSet):
    """A user's availability (themselves, a fellow team member, anyone for system admins), or with
    `teamId` each accepted member's (the team's admins and owners, and system admins)."""

    query_refers_to_objects = True  # an unknown or invisible userId/teamId is a 404
    scopes = {"GET": READ_SCHEDULE}
    pagination_class = None
    list_filters = AvailabilityQuery
    filters_by_user = False

    @extend_schema(
        responses=PolymorphicProxySerializer(
            component_name="AvailabilityAnswer",
            serializers=[UserAvailabilitySerializer, MemberAvailabilitySerializer(many=True)],
            resource_type_field_name=None,
            many=False,
        ),
        description="With `userId`, the user's availability object; with `teamId`, `[{userId, availability}]`.",
    )
    def list(self, request, *args, **kwargs):
        query = self.list_filters.parse(request)
        start, end = _range(query)
        user_id, team_id = query["user_id"], query["team_id"]
        if (user_id is None) == (team_id is None):
            raise ValidationError({"userId": ["Send either userId or teamId."]})
        if team_id is None:
            return _user_answer(request.user, user_id, start, end)
        team = team_list(user=request.user).filter(pk=team_id).first()
        if team is None:
            raise NotFound(f"Team {team_id} does not exist.")
        if not request.user.is_system_admin and not managed_team_ids(user=request.user).filter(team_id=team_id):
            raise Forbidden(f"Only an admin or owner of team {team_id} may read its members' availability.")
        return Response(team_members_availability(team=team, date_from=start, date_to=end))


class UserRangeQuery(QueryParameters):
    date_from = Instant(required=True, description="ISO 8601 date-time or date (UTC when no offset).")
    date_to = Instant(end=True, required=True, description="ISO 8601 date-time or date (inclusive).")


class UserAvailabilityViewSet(ResourceViewSet):
    """GET /users/{id}/availability: as GET /availability?userId={id}."""

    scopes = {"GET": READ_SCHEDULE}
    pagination_class = None
    list_filters = UserRangeQuery
    filters_by_user = False

    @extend_schema(responses=UserAvailabilitySerializer)
    def list(self, request, *args, **kwargs):
        user_id = integer_lookup(kwargs["user_id"])
        start, end = _range(self.list_filters.parse(request))
        return _user_answer(request.user, user_id, start, end)
