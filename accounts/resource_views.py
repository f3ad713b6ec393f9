"""Cal.com v1's `/users`, `/api-keys` and `/invites`."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from accounts.resource_serializers import (
    ApiKeyCreatedSerializer,
    ApiKeyCreateSerializer,
    ApiKeySerializer,
    ApiKeyUpdateSerializer,
    InvitedSerializer,
    InviteSerializer,
    UserSerializer,
    UserUpdateSerializer,
)
from accounts.selectors import api_key_list, user_list
from accounts.services import (
    api_key_create_as,
    api_key_revoke,
    api_key_update,
    team_invite,
    user_update,
)
from core.scopes import READ_PROFILE, WRITE_MEMBERSHIP
from core.viewsets import (
    CrudResourceViewSet,
    ListResourceMixin,
    ResourceAPIView,
    ResourceViewSet,
    RetrieveResourceMixin,
    UpdateResourceMixin,
)

# A credential with READ_PROFILE acts on its own user; API keys carry every scope.
PROFILE_SCOPES = {"GET": READ_PROFILE, "PATCH": READ_PROFILE, "POST": READ_PROFILE, "DELETE": READ_PROFILE}


class UserViewSet(ListResourceMixin, RetrieveResourceMixin, UpdateResourceMixin, ResourceViewSet):
    """System admins list, read and edit every user; anyone else only themselves (others: 404)."""

    selector = user_list
    scopes = {"GET": READ_PROFILE, "PATCH": READ_PROFILE}
    envelope_singular = "user"
    envelope_plural = "users"
    serializer_class = UserSerializer
    update_serializer_class = UserUpdateSerializer
    conflict_actions = ("partial_update",)

    def perform_update(self, instance, data):
        return user_update(user=instance, **data)


class ApiKeyViewSet(CrudResourceViewSet):
    """The caller's API keys; deleting one revokes it at once."""

    selector = api_key_list
    scopes = PROFILE_SCOPES
    envelope_singular = "api_key"
    envelope_plural = "api_keys"
    resource_label = "API key"
    serializer_class = ApiKeySerializer
    input_serializer_class = ApiKeyCreateSerializer
    update_serializer_class = ApiKeyUpdateSerializer

    @extend_schema(
        responses=inline_serializer(
            "ApiKeyCreatedEnvelope", {"api_key": ApiKeyCreatedSerializer(), "message": serializers.CharField()}
        )
    )
    def create(self, request, *args, **kwargs):
        data = self.validated_input()
        api_key, raw_key = api_key_create_as(
            actor=request.user,
            note=data["note"],
            expires_at=None if data["never_expires"] else data["expires_at"],
            user_id=data.get("user_id"),
        )
        body = {
            "api_key": {**ApiKeySerializer(api_key).data, "key": raw_key},
            "message": "API key created successfully. Save the `key` value as it won't be displayed again.",
        }
        return Response(body, headers={"Location": self.location_url(api_key)})

    def perform_update(self, instance, data):
        return api_key_update(api_key=instance, **data)

    def perform_destroy(self, instance):
        api_key_revoke(api_key=instance)


class InviteView(ResourceAPIView):
    """`POST /invites` `{teamId, usernameOrEmail, role, language?, accepted?}`: an invitation of an
    existing user into a team (a pending membership the invited user accepts)."""

    scopes = {"POST": WRITE_MEMBERSHIP}
    conflict_actions = ("post",)

    @extend_schema(request=InviteSerializer, responses=InvitedSerializer)
    def post(self, request):
        serializer = InviteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        team_invite(
            actor=request.user,
            team_id=data["team_id"],
            username_or_email=data["username_or_email"],
            role=data["role"],
            accepted=data.get("accepted"),
        )
        return Response({"success": True, "message": f"{data['username_or_email']} has been invited."})
