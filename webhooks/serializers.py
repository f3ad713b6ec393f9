"""Wire shapes of webhooks, deliveries and attempts (docs/webhooks.md)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from core.datetimes import iso_utc
from core.fastpath import reads
from core.limits import json_text_depth_exceeds, limit
from core.serializers import (
    ApiSerializer,
    CompactAppSerializer,
    CompactEventTypeSerializer,
    CompactTeamSerializer,
    CompactUserSerializer,
)
from core.validators import validate_no_space_or_control
from webhooks.templating import is_json_template


class ScheduledTriggerSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    trigger_event = serializers.CharField(read_only=True)
    booking_id = serializers.IntegerField(read_only=True)
    start_after = serializers.SerializerMethodField()

    @reads("start_after")
    def get_start_after(self, trigger) -> str:
        return iso_utc(trigger.start_after)


class CompactOAuthClientSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    client_id = serializers.CharField(read_only=True)


class WebhookSerializer(ApiSerializer):
    """`secret` is the clear secret only in the response that created or set it (context
    `reveal_secret`); everywhere else it is null and `hasSecret` says whether there is one."""

    id = serializers.UUIDField(read_only=True)
    user_id = serializers.IntegerField(read_only=True, allow_null=True)
    team_id = serializers.IntegerField(read_only=True, allow_null=True)
    event_type_id = serializers.IntegerField(read_only=True, allow_null=True)
    platformOAuthClientId = serializers.IntegerField(  # noqa: N815 - Cal.com's spelling on the wire
        source="platform_oauth_client_id", read_only=True, allow_null=True
    )
    subscriber_url = serializers.CharField(read_only=True)
    payload_template = serializers.SerializerMethodField()
    created_at = serializers.SerializerMethodField()
    active = serializers.BooleanField(read_only=True)
    disabled_reason = serializers.SerializerMethodField()
    rate_limit = serializers.FloatField(
        read_only=True, allow_null=True, help_text="At most this many attempts start per second; null: no limit."
    )
    circuit_open_until = serializers.SerializerMethodField(
        help_text="While the subscriber keeps timing out or refusing connections, its deliveries wait until this time."
    )
    event_triggers = serializers.ListField(child=serializers.CharField(), read_only=True)
    app_id = serializers.CharField(read_only=True, allow_null=True)
    secret = serializers.SerializerMethodField()
    has_secret = serializers.SerializerMethodField()
    previous_secret_expires_at = serializers.SerializerMethodField()
    platform = serializers.BooleanField(read_only=True)
    user = CompactUserSerializer(read_only=True, allow_null=True)
    team = CompactTeamSerializer(read_only=True, allow_null=True)
    event_type = CompactEventTypeSerializer(read_only=True, allow_null=True)
    platformOAuthClient = CompactOAuthClientSerializer(  # noqa: N815 - Cal.com's spelling on the wire
        source="platform_oauth_client", read_only=True, allow_null=True
    )
    app = CompactAppSerializer(read_only=True, allow_null=True)
    scheduled_triggers = ScheduledTriggerSerializer(many=True, read_only=True)

    @reads("payload_template")
    def get_payload_template(self, webhook) -> str | None:
        return webhook.payload_template or None

    @reads("created_at")
    def get_created_at(self, webhook) -> str:
        return iso_utc(webhook.created_at)

    @reads("disabled_reason")
    def get_disabled_reason(self, webhook) -> str | None:
        return webhook.disabled_reason or None

    @reads("circuit_open_until")
    def get_circuit_open_until(self, webhook) -> str | None:
        return iso_utc(webhook.circuit_open_until)

    @reads("secret")
    def get_secret(self, webhook) -> str | None:
        return webhook.secret if self.context.get("reveal_secret") and webhook.secret else None

    @reads("secret")
    def get_has_secret(self, webhook) -> bool:
        return bool(webhook.secret)

    @reads("previous_secret", "previous_secret_expires_at")
    def get_previous_secret_expires_at(self, webhook) -> str | None:
        if not webhook.previous_secret:
            return None
        return iso_utc(webhook.previous_secret_expires_at)


class SubscriberUrlField(serializers.CharField):
    """Taken exactly as sent: no surrounding-space trimming, and a URL with whitespace or a control
    character anywhere (CR/LF, tab, NUL, ...) is refused rather than cleaned up by a URL parser."""

    def __init__(self, **kwargs):
        super().__init__(max_length=2048, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            validate_no_space_or_control(value)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        return value


class PayloadTemplateField(serializers.CharField):
    """At most API_LIMITS["WEBHOOK_TEMPLATE_MAX_CHARS"] characters; a JSON template nests at most
    API_LIMITS["WEBHOOK_TEMPLATE_MAX_DEPTH"] levels (it is parsed and rendered for every delivery)."""

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_blank=True, allow_null=True, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        max_chars, max_depth = limit("WEBHOOK_TEMPLATE_MAX_CHARS"), limit("WEBHOOK_TEMPLATE_MAX_DEPTH")
        if len(value) > max_chars:
            raise serializers.ValidationError(f"Must be at most {max_chars} characters.")
        if is_json_template(value) and json_text_depth_exceeds(value, max_depth):
            raise serializers.ValidationError(f"A JSON template may nest at most {max_depth} levels.")
        return value


class EventsPerSecondField(serializers.FloatField):
    """A JSON number, read strictly like the API's integers: not a string, not a boolean."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


EVENT_TRIGGERS_MAX = 100
# A webhook's rateLimit (events/s): from one per 100 s to 1000/s.
RATE_LIMIT_MIN, RATE_LIMIT_MAX = 0.01, 1000.0


class WebhookCreateSerializer(ApiSerializer):
    subscriber_url = SubscriberUrlField()
    event_triggers = serializers.ListField(
        child=serializers.CharField(max_length=40), allow_empty=False, max_length=EVENT_TRIGGERS_MAX
    )
    payload_template = PayloadTemplateField()
    active = serializers.BooleanField(required=False, default=True)
    secret = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    rate_limit = EventsPerSecondField(
        required=False,
        allow_null=True,
        min_value=RATE_LIMIT_MIN,
        max_value=RATE_LIMIT_MAX,
        help_text="Attempts started per second at most, across every worker (null: no limit).",
    )
    user_id = serializers.IntegerField(required=False, allow_null=True)
    team_id = serializers.IntegerField(required=False, allow_null=True)
    event_type_id = serializers.IntegerField(required=False, allow_null=True)
    platformOAuthClientId = serializers.IntegerField(  # noqa: N815 - Cal.com's spelling on the wire
        source="platform_oauth_client_id", required=False, allow_null=True
    )
    app_id = serializers.CharField(required=False, allow_null=True, max_length=100)


class WebhookUpdateSerializer(ApiSerializer):
    subscriber_url = SubscriberUrlField(required=False)
    event_triggers = serializers.ListField(
        child=serializers.CharField(max_length=40), allow_empty=False, required=False, max_length=EVENT_TRIGGERS_MAX
    )
    payload_template = PayloadTemplateField()
    active = serializers.BooleanField(required=False)
    secret = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    rate_limit = EventsPerSecondField(
        required=False,
        allow_null=True,
        min_value=RATE_LIMIT_MIN,
        max_value=RATE_LIMIT_MAX,
        help_text="Attempts started per second at most, across every worker (null: no limit).",
    )


class RecoverSerializer(ApiSerializer):
    """`POST /webhooks/{id}/recover`: the deliveries whose event happened in [since, until)."""

    since = serializers.DateTimeField(help_text="RFC 3339; at most DELIVERY_RETENTION_SECONDS (30 days) ago.")
    until = serializers.DateTimeField(required=False, allow_null=True, default=None, help_text="RFC 3339; excluded.")
    status = serializers.ChoiceField(
        choices=["failed", "succeeded", "cancelled"], required=False, default="failed", help_text="Default: failed."
    )


class EmptyBodySerializer(ApiSerializer):
    """For POST actions that take no body: any key is an unknown field."""


class DeliveryAttemptSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    attempt_number = serializers.IntegerField(read_only=True)
    attempted_at = serializers.SerializerMethodField()
    duration_ms = serializers.IntegerField(read_only=True)
    request_url = serializers.CharField(read_only=True)
    request_headers = serializers.DictField(read_only=True)
    response_status = serializers.IntegerField(read_only=True, allow_null=True)
    response_headers = serializers.DictField(read_only=True)
    response_body = serializers.CharField(read_only=True)
    error_class = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()

    @reads("attempted_at")
    def get_attempted_at(self, attempt) -> str:
        return iso_utc(attempt.attempted_at)

    @reads("error_class")
    def get_error_class(self, attempt) -> str | None:
        return attempt.error_class or None

    @reads("error_message")
    def get_error(self, attempt) -> str | None:
        return attempt.error_message or None


class DeliverySerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    webhook_id = serializers.UUIDField(read_only=True)
    trigger_event = serializers.CharField(read_only=True)
    message_id = serializers.CharField(read_only=True, help_text="The Standard Webhooks `webhook-id`.")
    status = serializers.CharField(read_only=True)
    attempt_count = serializers.IntegerField(source="attempts", read_only=True)
    next_attempt_at = serializers.SerializerMethodField()
    last_attempt_at = serializers.SerializerMethodField()
    delivered_at = serializers.SerializerMethodField()
    created_at = serializers.SerializerMethodField()
    payload = serializers.JSONField(read_only=True)

    @reads("next_attempt_at")
    def get_next_attempt_at(self, delivery) -> str | None:
        return iso_utc(delivery.next_attempt_at)

    @reads("last_attempt_at")
    def get_last_attempt_at(self, delivery) -> str | None:
        return iso_utc(delivery.last_attempt_at)

    @reads("delivered_at")
    def get_delivered_at(self, delivery) -> str | None:
        return iso_utc(delivery.delivered_at)

    @reads("event_created_at")
    def get_created_at(self, delivery) -> str:
        return iso_utc(delivery.event_created_at)


class DeliveryDetailSerializer(DeliverySerializer):
    attempts = DeliveryAttemptSerializer(source="attempt_log", many=True, read_only=True)


class EventSerializer(ApiSerializer):
    """One event of the feed (GET /v1/events): what the webhook carried, with where it went."""

    id = serializers.IntegerField(read_only=True, help_text="The delivery's id (see webhooks' delivery log).")
    webhook_id = serializers.UUIDField(read_only=True)
    message_id = serializers.CharField(read_only=True, help_text="The Standard Webhooks `webhook-id` it had.")
    trigger_event = serializers.CharField(read_only=True)
    created_at = serializers.SerializerMethodField()
    payload = serializers.JSONField(read_only=True)

    @reads("event_created_at")
    def get_created_at(self, delivery) -> str:
        return iso_utc(delivery.event_created_at)


class EventFeedSerializer(ApiSerializer):
    events = EventSerializer(many=True, read_only=True)
    next_cursor = serializers.CharField(
        read_only=True, help_text="Pass as `cursor` next time; always present, also when `events` is empty."
    )
    has_more = serializers.BooleanField(read_only=True, help_text="More events are ready now: call again at once.")
