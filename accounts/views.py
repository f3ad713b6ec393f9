from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework.response import Response

from accounts.selectors import membership_list, team_list
from accounts.serializers import (
    MembershipCreateSerializer,
    MembershipSerializer,
    MembershipUpdateSerializer,
    MeSerializer,
    TeamSerializer,
    TeamUpdateSerializer,
)
from accounts.services import (
    membership_create,
    membership_delete,
    membership_update,
    team_create,
    team_delete,
    team_update,
)
from core.exceptions import ApplicationError
from core.query import Integer, QueryParameters, is_ascii_integer
from core.scopes import READ_MEMBERSHIP, READ_PROFILE, WRITE_MEMBERSHIP
from core.viewsets import (
    CrudResourceViewSet,
    ResourceAPIView,
)

MEMBERSHIP_SCOPES = {
    "GET": READ_MEMBERSHIP,
    "POST": WRITE_MEMBERSHIP,
    "PATCH": WRITE_MEMBERSHIP,
    "DELETE": WRITE_MEMBERSHIP,
}


class MeView(ResourceAPIView):
    """The signed-in user's profile."""

    scopes = {"GET": READ_PROFILE}

    @extend_schema(responses=inline_serializer("MeResponse", {"user": MeSerializer()}))
    def get(self, request):
        return Response({"user": MeSerializer(request.user).data})


class TeamViewSet(CrudResourceViewSet):
    selector = team_list
    scopes = MEMBERSHIP_SCOPES
    envelope_singular = "team"
    envelope_plural = "teams"
    serializer_class = TeamSerializer
    update_serializer_class = TeamUpdateSerializer
    conflict_actions = ("create", "partial_update")

    def perform_create(self, data):
        return team_create(owner=self.request.user, **data)

    def perform_update(self, instance, data):
        return team_update(team=instance, actor=self.request.user, **data)

    def perform_destroy(self, instance):
        team_delete(team=instance, actor=self.request.user)


class MembershipFilters(QueryParameters):
    team_id = Integer(description="Only the memberships of this team.")


class MembershipViewSet(CrudResourceViewSet):
    """Path ids are `{userId}_{teamId}`."""

    selector = membership_list
    scopes = MEMBERSHIP_SCOPES
    envelope_singular = "membership"
    envelope_plural = "memberships"
    serializer_class = MembershipSerializer
    input_serializer_class = MembershipCreateSerializer
    update_serializer_class = MembershipUpdateSerializer
    lookup_value_regex = r"[^/]+"
    lookup_schema = {"type": "string", "pattern": r"^[0-9]+_[0-9]+$", "example": "12_3"}
    conflict_actions = ("create", "partial_update", "destroy")
    list_filters = MembershipFilters

    def lookup_object(self, queryset, lookup):
        user_id, separator, team_id = lookup.partition("_")
        # ASCII digits only: str.isdigit() also takes other scripts' digits, which int() would read.
        if not (separator and is_ascii_integer(user_id) and is_ascii_integer(team_id)):
            raise ApplicationError(
                f"'{lookup}' is not a membership id; use {{userId}}_{{teamId}}, e.g. 12_3.",
                errors={"id": ["Expected {userId}_{teamId}."]},
            )
        return queryset.filter(user_id=int(user_id), team_id=int(team_id)).first()

    def location_id(self, instance) -> str:
        return f"{instance.user_id}_{instance.team_id}"

    def perform_create(self, data):
        return membership_create(actor=self.request.user, **data)

    def perform_update(self, instance, data):
        return membership_update(membership=instance, actor=self.request.user, **data)

    def perform_destroy(self, instance):
        membership_delete(membership=instance, actor=self.request.user)
