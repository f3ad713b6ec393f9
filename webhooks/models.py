import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower


class WebhookTrigger(models.TextChoices):
    """Cal.com's trigger names, so that existing subscriptions carry over."""

    BOOKING_CREATED = "BOOKING_CREATED"
    BOOKING_PAYMENT_INITIATED = "BOOKING_PAYMENT_INITIATED"
    BOOKING_PAID = "BOOKING_PAID"
    BOOKING_RESCHEDULED = "BOOKING_RESCHEDULED"
    BOOKING_REQUESTED = "BOOKING_REQUESTED"
    BOOKING_CANCELLED = "BOOKING_CANCELLED"
    BOOKING_REJECTED = "BOOKING_REJECTED"
    BOOKING_NO_SHOW_UPDATED = "BOOKING_NO_SHOW_UPDATED"
    BOOKING_LOCATION_UPDATED = "BOOKING_LOCATION_UPDATED"
    BOOKING_REASSIGNED = "BOOKING_REASSIGNED"
    FORM_SUBMITTED = "FORM_SUBMITTED"
    FORM_SUBMITTED_NO_EVENT = "FORM_SUBMITTED_NO_EVENT"
    ROUTING_FORM_FALLBACK_HIT = "ROUTING_FORM_FALLBACK_HIT"
    MEETING_ENDED = "MEETING_ENDED"
    MEETING_STARTED = "MEETING_STARTED"
    INSTANT_MEETING = "INSTANT_MEETING"
    INSTANT_MEETING_ACCEPTED = "INSTANT_MEETING_ACCEPTED"
    RECORDING_READY = "RECORDING_READY"
    RECORDING_TRANSCRIPTION_GENERATED = "RECORDING_TRANSCRIPTION_GENERATED"
    AFTER_HOSTS_CAL_VIDEO_NO_SHOW = "AFTER_HOSTS_CAL_VIDEO_NO_SHOW"
    AFTER_GUESTS_CAL_VIDEO_NO_SHOW = "AFTER_GUESTS_CAL_VIDEO_NO_SHOW"
    OOO_CREATED = "OOO_CREATED"
    WRONG_ASSIGNMENT_REPORT = "WRONG_ASSIGNMENT_REPORT"
    CALENDAR_ENTRY_REJECTED = "CALENDAR_ENTRY_REJECTED"


class Webhook(models.Model):
    """A subscription. The secret is kept in the clear because every delivery is signed with it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks"
    )
    team = models.ForeignKey("accounts.Team", null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks")
    event_type = models.ForeignKey(
        "scheduling.EventType", null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks"
    )
    platform_oauth_client = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="webhooks",
    )
    app = models.ForeignKey("core.App", null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks")
    subscriber_url = models.URLField(max_length=2048)
    payload_template = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    event_triggers = models.JSONField(default=list)
    secret = models.CharField(max_length=500, blank=True)
    previous_secret = models.CharField(max_length=500, blank=True)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    platform = models.BooleanField(default=False)
    # Start of the current run of failed attempts (None after any success): drives auto-disable.
    failing_since = models.DateTimeField(null=True, blank=True)
    # The circuit breaker (docs/webhooks.md, "Isolation"): attempts in a row that timed out or could
    # not connect, and until when the webhook's deliveries wait instead of trying (None: closed).
    consecutive_failures = models.PositiveIntegerField(default=0)
    circuit_open_until = models.DateTimeField(null=True, blank=True)
    # At most this many attempts started per second (None: no limit), across every worker.
    rate_limit = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(event_type__isnull=True) | Q(team__isnull=True), name="webhook_event_type_or_team"
            ),
            models.CheckConstraint(
                condition=Q(rate_limit__isnull=True) | Q(rate_limit__gt=0), name="webhook_rate_limit_positive"
            ),
            models.UniqueConstraint(
                fields=["user", "subscriber_url"],
                condition=Q(user__isnull=False, team__isnull=True, event_type__isnull=True),
                name="webhook_user_url_unique",
            ),
            models.UniqueConstraint(
                fields=["team", "subscriber_url"], condition=Q(team__isnull=False), name="webhook_team_url_unique"
            ),
            models.UniqueConstraint(
                fields=["event_type", "subscriber_url"],
                condition=Q(event_type__isnull=False),
                name="webhook_event_type_url_unique",
            ),
            models.UniqueConstraint(
                fields=["platform_oauth_client", "subscriber_url"],
                condition=Q(platform_oauth_client__isnull=False),
                name="webhook_client_url_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["active"], name="webhook_active"),
            # The back office: its list in this ordering, and search in subscriber URLs.
            models.Index(fields=["created_at", "id"], name="webhook_created_at_id"),
            GinIndex(OpClass(Lower("subscriber_url"), name="gin_trgm_ops"), name="webhook_url_trgm"),
        ]

    def __str__(self):
        return self.subscriber_url


class WebhookScheduledTrigger(models.Model):
    """A MEETING_STARTED / MEETING_ENDED event waiting for its time."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="scheduled_triggers")
    booking = models.ForeignKey("scheduling.Booking", on_delete=models.CASCADE, related_name="scheduled_triggers")
    trigger_event = models.CharField(max_length=40, choices=WebhookTrigger.choices)
    start_after = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["start_after", "id"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "booking", "trigger_event"], name="scheduled_trigger_unique"),
            models.CheckConstraint(
                condition=Q(trigger_event__in=[WebhookTrigger.MEETING_STARTED, WebhookTrigger.MEETING_ENDED]),
                name="scheduled_trigger_meeting_only",
            ),
        ]
        indexes = [models.Index(fields=["start_after"], name="scheduled_trigger_start_after")]

    def __str__(self):
        return f"{self.trigger_event} for {self.booking_id} at {self.start_after:%Y-%m-%d %H:%M}"


PING_TRIGGER = "PING"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERING = "delivering"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


OPEN_DELIVERY_STATUSES = (DeliveryStatus.PENDING, DeliveryStatus.DELIVERING)


class CurrentTransactionId(models.Func):
    """The id of the writing transaction (`pg_current_xact_id()`, as a bigint), as a column default:
    the event feed (GET /v1/events) reads the outbox in commit order through it."""

    template = "(pg_current_xact_id()::text::bigint)"
    output_field = models.BigIntegerField()


class WebhookDelivery(models.Model):
    """One event for one webhook (the outbox row), written in the transaction that caused it.

    `message_id` is the Standard Webhooks `webhook-id`: fixed for the event and webhook, the same on
    every retry and redelivery. `next_attempt_at` is when the next attempt is due; `lease_expires_at`
    is how long the row belongs to whoever enqueued or is sending it (the sweeper takes back rows
    whose lease ran out). `retry_index` counts failures since the last (re)start, for the schedule.
    `in_sequence` marks the deliveries a re-enabled webhook sends one after the other, oldest first
    (`webhooks.delivery.resume_deliveries`): the end of one's attempt releases the next.
    """

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    trigger_event = models.CharField(max_length=40)
    payload = models.JSONField()
    event_created_at = models.DateTimeField()
    message_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    retry_index = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    in_sequence = models.BooleanField(default=False, db_default=False)
    # Set by PostgreSQL on insert; see webhooks.events for how it orders the feed.
    transaction_id = models.BigIntegerField(db_default=CurrentTransactionId(), editable=False)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.CheckConstraint(condition=Q(status__in=DeliveryStatus.values), name="delivery_status_valid"),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status__in=["pending", "delivering"]),
                name="delivery_open_due",
            ),
            models.Index(fields=["webhook", "status"], name="delivery_webhook_status"),
            models.Index(fields=["webhook", "event_created_at"], name="delivery_webhook_created"),
            models.Index(fields=["transaction_id", "id"], name="delivery_commit_order"),
            # The back office: a webhook's latest deliveries, the log by status, its date hierarchy.
            models.Index(fields=["webhook", "id"], name="delivery_webhook_id"),
            models.Index(fields=["status", "id"], name="delivery_status_id"),
            models.Index(fields=["created_at"], name="delivery_created_at"),
            # A re-enabled webhook's sequence: the next delivery to release, and the one that is out.
            models.Index(fields=["webhook", "id"], condition=Q(in_sequence=True), name="delivery_in_sequence"),
            # The retention purge (webhooks.retention): finished deliveries, oldest event first.
            models.Index(
                fields=["event_created_at"],
                condition=Q(status__in=["succeeded", "failed", "cancelled"]),
                name="delivery_finished_event_time",
            ),
        ]

    def __str__(self):
        return f"{self.trigger_event} → {self.webhook_id} ({self.status})"


class ErrorClass(models.TextChoices):
    DNS = "dns"
    BLOCKED = "blocked"
    CONNECT = "connect"
    TLS = "tls"
    TIMEOUT = "timeout"
    HTTP = "http"
    # Cut short by a worker that stopped mid-send: the receiver may have got (part of) the request.
    INTERRUPTED = "interrupted"


class DeliveryAttempt(models.Model):
    """One HTTP request of a delivery, as sent and as answered (the first 8 KB of the body)."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    attempt_number = models.PositiveIntegerField()
    attempted_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)
    request_url = models.URLField(max_length=2048)
    request_headers = models.JSONField(default=dict)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_headers = models.JSONField(default=dict, blank=True)
    response_body = models.TextField(blank=True)
    # Blank with no response_status while the attempt is in flight.
    error_class = models.CharField(max_length=16, choices=ErrorClass.choices, blank=True)
    error_message = models.TextField(blank=True)

    class Meta:
        ordering = ["delivery", "attempt_number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "attempt_number"], name="attempt_number_unique"),
        ]
        # The sweeper looks for attempts left open by a worker that stopped mid-send.
        indexes = [
            models.Index(
                fields=["delivery"], condition=Q(error_class="", response_status__isnull=True), name="attempt_open"
            )
        ]

    def __str__(self):
        return f"attempt {self.attempt_number} of delivery {self.delivery_id}"

    @property
    def succeeded(self) -> bool:
        return not self.error_class and self.response_status is not None and 200 <= self.response_status < 300
