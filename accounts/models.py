from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

from core.validators import validate_time_zone as validate_iana_time_zone


def validate_time_zone(value: str) -> None:
    """An IANA zone that means the same on every host (core.validators; migrations name this one)."""
    validate_iana_time_zone(value)


class UserRole(models.TextChoices):
    USER = "USER"
    ADMIN = "ADMIN"


class WeekDay(models.TextChoices):
    SUNDAY = "Sunday"
    MONDAY = "Monday"
    TUESDAY = "Tuesday"
    WEDNESDAY = "Wednesday"
    THURSDAY = "Thursday"
    FRIDAY = "Friday"
    SATURDAY = "Saturday"


class TimeFormat(models.IntegerChoices):
    TWELVE_HOUR = 12
    TWENTY_FOUR_HOUR = 24


class User(AbstractUser):
    """A person who uses the service. `date_joined` is the API's `createdDate` (docs/api.md, Me)."""

    name = models.CharField(max_length=200, blank=True)
    email = models.EmailField(max_length=254)
    email_verified = models.DateTimeField(null=True, blank=True)
    bio = models.TextField(blank=True)
    avatar = models.URLField(max_length=2048, blank=True)
    time_zone = models.CharField(max_length=64, default="Europe/London", validators=[validate_time_zone])
    week_start = models.CharField(max_length=9, choices=WeekDay.choices, default=WeekDay.SUNDAY)
    end_time = models.PositiveIntegerField(default=1440, help_text="Minutes after midnight.")
    buffer_time = models.PositiveIntegerField(default=0, help_text="Minutes.")
    app_theme = models.CharField(max_length=32, blank=True, null=True)
    theme = models.CharField(max_length=32, blank=True, null=True)
    default_schedule = models.ForeignKey(
        "scheduling.Schedule", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    locale = models.CharField(max_length=16, default="en")
    time_format = models.PositiveSmallIntegerField(choices=TimeFormat.choices, default=TimeFormat.TWELVE_HOUR)
    hide_branding = models.BooleanField(default=False)
    brand_color = models.CharField(max_length=7, default="#292929")
    dark_brand_color = models.CharField(max_length=7, default="#fafafa")
    allow_dynamic_booking = models.BooleanField(default=True)
    verified = models.BooleanField(default=False)
    invited_to = models.IntegerField(null=True, blank=True)
    role = models.CharField(max_length=5, choices=UserRole.choices, default=UserRole.USER)

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("email"), name="user_email_ci_unique"),
            models.CheckConstraint(condition=Q(role__in=UserRole.values), name="user_role_valid"),
            models.CheckConstraint(condition=Q(week_start__in=WeekDay.values), name="user_week_start_valid"),
            models.CheckConstraint(condition=Q(time_format__in=TimeFormat.values), name="user_time_format_valid"),
            models.CheckConstraint(condition=Q(end_time__lte=1440), name="user_end_time_within_day"),
        ]
        # The back office's search (core.admin_scale): case-insensitive prefixes, names by trigram.
        indexes = [
            models.Index(OpClass(Lower("email"), name="text_pattern_ops"), name="user_email_lower_prefix"),
            models.Index(OpClass(Lower("username"), name="text_pattern_ops"), name="user_username_lower_prefix"),
            GinIndex(OpClass(Lower("name"), name="gin_trgm_ops"), name="user_name_trgm"),
            # The back office's filters: the few staff, superusers, admins, inactive or verified users.
            models.Index(fields=["role"], name="user_role"),
            models.Index(fields=["id"], condition=Q(is_staff=True), name="user_staff"),
            models.Index(fields=["id"], condition=Q(is_superuser=True), name="user_superuser"),
            models.Index(fields=["id"], condition=Q(is_active=False), name="user_inactive"),
            models.Index(fields=["id"], condition=Q(verified=True), name="user_verified"),
        ]

    def __str__(self):
        return self.username

    @property
    def is_system_admin(self) -> bool:
        return self.role == UserRole.ADMIN


class Team(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    bio = models.TextField(blank=True)
    logo = models.URLField(max_length=2048, blank=True)
    hide_branding = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [GinIndex(OpClass(Lower("name"), name="gin_trgm_ops"), name="team_name_trgm")]

    def __str__(self):
        return self.name


class MembershipRole(models.TextChoices):
    MEMBER = "MEMBER"
    ADMIN = "ADMIN"
    OWNER = "OWNER"


ROLE_RANK = {MembershipRole.MEMBER: 1, MembershipRole.ADMIN: 2, MembershipRole.OWNER: 3}


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    accepted = models.BooleanField(default=False)
    role = models.CharField(max_length=6, choices=MembershipRole.choices, default=MembershipRole.MEMBER)
    disable_impersonation = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "team"], name="membership_user_team_unique"),
            models.CheckConstraint(condition=Q(role__in=MembershipRole.values), name="membership_role_valid"),
        ]
        indexes = [
            models.Index(fields=["team", "accepted", "role"], name="membership_team_acc_role"),
            models.Index(fields=["role"], name="membership_role"),
            models.Index(fields=["accepted"], name="membership_accepted"),
        ]

    def __str__(self):
        return f"{self.user} in {self.team} ({self.role})"


class ApiKey(models.Model):
    """An API key. Only its SHA-256 is stored; `prefix` is the visible start, for recognising it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    prefix = models.CharField(max_length=32)
    hashed_key = models.CharField(max_length=64, unique=True)
    note = models.CharField(max_length=200, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "API key"
        indexes = [
            models.Index(fields=["prefix"], name="api_key_prefix", opclasses=["varchar_pattern_ops"]),
            GinIndex(OpClass(Lower("note"), name="gin_trgm_ops"), name="api_key_note_trgm"),
        ]

    def __str__(self):
        return f"{self.prefix}… ({self.note or self.user})"


class OAuthClientProfile(models.Model):
    """What the operator adds to django-oauth-toolkit's Application (which stays unswapped)."""

    application = models.OneToOneField(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    logo = models.URLField(max_length=2048, blank=True)
    app_link = models.URLField(max_length=2048, blank=True)
    scope_ceiling = models.JSONField(default=list, blank=True, help_text="Scopes this client may ask for.")
    suspended = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "OAuth client profile"

    def __str__(self):
        return f"Profile of {self.application}"


class OAuthCodeRedemption(models.Model):
    """An authorization code that was exchanged for tokens, remembered by its SHA-256 only.

    DOT deletes a code once it is used; this row outlives it so that a replayed code can be told
    from an unknown one and every token issued from it revoked (RFC 6749 §4.1.2). It also dates
    the user's consent for the connected-apps page.
    """

    code_checksum = models.CharField(max_length=64, unique=True)
    application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    token_family = models.UUIDField(null=True, blank=True)
    scope = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "OAuth code redemption"
        indexes = [models.Index(fields=["user", "application"], name="oauth_redemption_user_app")]

    def __str__(self):
        return f"Code redemption #{self.pk} ({self.application_id} for {self.user_id})"
