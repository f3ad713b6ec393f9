"""Teams, memberships and /me on the wire (docs/api.md, "Teams and memberships" and "Me")."""

from rest_framework import serializers

from accounts.models import MembershipRole, Team, User
from core.serializers import (
    ApiModelSerializer,
    ApiSerializer,
    CompactTeamSerializer,
    CompactUserSerializer,
    OptionalURLField,
)


class TeamSerializer(ApiModelSerializer):
    logo = OptionalURLField(required=False, max_length=2048)

    class Meta:
        model = Team
        fields = ["id", "name", "slug", "bio", "logo", "hide_branding"]
        read_only_fields = ["id"]
        # A taken slug is a 409 from the service, not a 400 from a unique validator.
        extra_kwargs = {"slug": {"validators": []}}


class TeamUpdateSerializer(TeamSerializer):
    class Meta(TeamSerializer.Meta):
        extra_kwargs = {
            "slug": {"validators": [], "required": False},
            "name": {"required": False},
        }


class MembershipSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    user_id = serializers.IntegerField(read_only=True)
    team_id = serializers.IntegerField(read_only=True)
    accepted = serializers.BooleanField(read_only=True)
    role = serializers.ChoiceField(choices=MembershipRole.choices, read_only=True)
    disable_impersonation = serializers.BooleanField(read_only=True)
    team = CompactTeamSerializer(read_only=True)
    user = CompactUserSerializer(read_only=True)


class MembershipCreateSerializer(ApiSerializer):
    user_id = serializers.IntegerField()
    team_id = serializers.IntegerField()
    role = serializers.ChoiceField(choices=MembershipRole.choices, required=False, default=MembershipRole.MEMBER)
    disable_impersonation = serializers.BooleanField(required=False, default=False)
    accepted = serializers.BooleanField(required=False, help_text="System administrators only.")


class MembershipUpdateSerializer(ApiSerializer):
    # Declared read-only so that sending them is a 400 saying "read-only", not "unknown field": a
    # membership's user and team never change (docs/api.md, "Teams and memberships").
    user_id = serializers.IntegerField(read_only=True)
    team_id = serializers.IntegerField(read_only=True)
    accepted = serializers.BooleanField(required=False, help_text="Only the invited user, only to true.")
    role = serializers.ChoiceField(choices=MembershipRole.choices, required=False)
    disable_impersonation = serializers.BooleanField(required=False, help_text="Only the member themselves.")


class MeSerializer(ApiModelSerializer):
    """Exactly the fields of docs/api.md, "Me": no password hash, no staff or superuser flags."""

    created_date = serializers.DateTimeField(source="date_joined", read_only=True)
    default_schedule_id = serializers.IntegerField(read_only=True, allow_null=True)
    avatar = OptionalURLField(read_only=True)

    class Meta:
        model = User
        fields = [
            "id",
            "username",
            "name",
            "email",
            "email_verified",
            "bio",
            "avatar",
            "time_zone",
            "week_start",
            "end_time",
            "buffer_time",
            "app_theme",
            "theme",
            "default_schedule_id",
            "locale",
            "time_format",
            "hide_branding",
            "brand_color",
            "dark_brand_color",
            "allow_dynamic_booking",
            "created_date",
            "verified",
            "invited_to",
            "role",
        ]
        read_only_fields = fields
