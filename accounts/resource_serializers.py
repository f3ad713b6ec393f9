"""Wire shapes of Cal.com v1's `/users`, `/api-keys` and `/invites`."""

from rest_framework import serializers

from accounts.models import MembershipRole, TimeFormat, WeekDay, validate_time_zone
from accounts.serializers import MeSerializer
from core.serializers import ApiSerializer


class UserSerializer(MeSerializer):
    """A user as `/users` shows it: the fields of `/me`."""


class UserUpdateSerializer(ApiSerializer):
    """What a user changes of their own profile (a system admin, of anyone's)."""

    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    email = serializers.EmailField(max_length=254, required=False)
    bio = serializers.CharField(max_length=5000, required=False, allow_blank=True)
    time_zone = serializers.CharField(max_length=64, required=False, validators=[validate_time_zone])
    week_start = serializers.ChoiceField(choices=WeekDay.choices, required=False)
    locale = serializers.CharField(max_length=16, required=False)
    time_format = serializers.ChoiceField(choices=TimeFormat.choices, required=False)
    hide_branding = serializers.BooleanField(required=False)
    brand_color = serializers.RegexField(r"^#[0-9A-Fa-f]{6}$", required=False)
    dark_brand_color = serializers.RegexField(r"^#[0-9A-Fa-f]{6}$", required=False)
    theme = serializers.CharField(max_length=32, required=False, allow_null=True)
    app_theme = serializers.CharField(max_length=32, required=False, allow_null=True)


class ApiKeySerializer(ApiSerializer):
    """Cal.com v1's public API key: never the key or its hash."""

    id = serializers.IntegerField(read_only=True)
    user_id = serializers.IntegerField(read_only=True)
    note = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)
    last_used_at = serializers.DateTimeField(read_only=True, allow_null=True)


class ApiKeyCreatedSerializer(ApiKeySerializer):
    key = serializers.CharField(read_only=True, help_text="The key itself: shown in this answer only.")


class ApiKeyCreateSerializer(ApiSerializer):
    note = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    never_expires = serializers.BooleanField(required=False, default=False)
    user_id = serializers.IntegerField(required=False, min_value=1, help_text="System admins only.")


class ApiKeyUpdateSerializer(ApiSerializer):
    note = serializers.CharField(max_length=200, allow_blank=True)


class InviteSerializer(ApiSerializer):
    team_id = serializers.IntegerField(min_value=1)
    username_or_email = serializers.CharField(max_length=254)
    role = serializers.ChoiceField(choices=MembershipRole.choices, default=MembershipRole.MEMBER)
    language = serializers.CharField(max_length=16, required=False, help_text="Accepted; no e-mail is sent.")
    accepted = serializers.BooleanField(required=False, help_text="System admins only.")


class InvitedSerializer(ApiSerializer):
    success = serializers.BooleanField()
    message = serializers.CharField()
