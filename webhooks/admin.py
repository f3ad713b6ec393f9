"""Back office for webhooks: each webhook with its latest deliveries inline, the delivery log with
filters by status and trigger, and a "redeliver" action. Every write goes through the services."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Subquery
from django.utils.html import format_html

from core.admin_scale import CONTAINS, PREFIX, PREFIX_ANY_CASE, ScaledAdminMixin, SearchField, autocomplete_filter
from core.exceptions import Conflict
from webhooks.models import (
    PING_TRIGGER,
    DeliveryAttempt,
    Webhook,
    WebhookDelivery,
    WebhookScheduledTrigger,
    WebhookTrigger,
)
from webhooks.services import (
    clean_event_triggers,
    delivery_redeliver,
    validate_subscriber_url,
    webhook_deactivate,
    webhook_update,
)
from webhooks.templating import validate_template

INLINE_DELIVERIES = 50


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class WebhookDeliveryInline(ReadOnlyInline):
    model = WebhookDelivery
    verbose_name_plural = f"latest {INLINE_DELIVERIES} deliveries"
    fields = ("trigger_event", "status", "attempts", "next_attempt_at", "last_attempt_at", "message_id", "created_at")
    readonly_fields = fields

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        latest = WebhookDelivery.objects.order_by("-id").values("pk")
        # The inline shows the most recent deliveries only; the full log is the deliveries changelist.
        return queryset.filter(pk__in=Subquery(latest.filter(webhook=self.parent_webhook)[:INLINE_DELIVERIES]))

    def get_formset(self, request, obj=None, **kwargs):
        self.parent_webhook = obj
        return super().get_formset(request, obj, **kwargs)


class ScheduledTriggerInline(ReadOnlyInline):
    model = WebhookScheduledTrigger
    verbose_name_plural = "pending scheduled triggers"
    fields = ("trigger_event", "booking", "start_after")
    readonly_fields = fields
    show_change_link = False


def _field_errors(error: ValidationError) -> list[str]:
    return [message for messages_ in error.message_dict.values() for message in messages_]


class WebhookAdminForm(forms.ModelForm):
    """The API's checks (SSRF, triggers, template) as form errors instead of a crash on save."""

    subscriber_url = forms.URLField(max_length=2048, assume_scheme="https")

    class Meta:
        model = Webhook
        fields = ("subscriber_url", "event_triggers", "payload_template", "active")

    def clean(self):
        cleaned = super().clean()
        try:
            if "subscriber_url" in self.changed_data and cleaned.get("subscriber_url"):
                validate_subscriber_url(cleaned["subscriber_url"])
            triggers = clean_event_triggers(cleaned.get("event_triggers") or [])
            cleaned["event_triggers"] = triggers
            validate_template(cleaned.get("payload_template") or "", trigger_events=triggers)
        except ValidationError as error:
            raise ValidationError(_field_errors(error)) from None
        return cleaned


@admin.register(Webhook)
class WebhookAdmin(ScaledAdminMixin, admin.ModelAdmin):
    form = WebhookAdminForm
    list_display = ("subscriber_url", "owner", "active", "disabled_reason", "triggers", "created_at")
    list_filter = ("active", "platform", autocomplete_filter("user", "owner"), "created_at")
    search_by = (
        SearchField("subscriber_url", "subscriber URL", CONTAINS),
        SearchField("user__email", "owner e-mail", PREFIX_ANY_CASE),
        SearchField("user__username", "owner username", PREFIX_ANY_CASE),
        SearchField("team__slug", "team slug", PREFIX),
    )
    list_select_related = ("user", "team", "event_type", "platform_oauth_client")
    raw_id_fields = ("user", "team", "event_type", "platform_oauth_client", "app")
    fields = (
        "id",
        "subscriber_url",
        "event_triggers",
        "payload_template",
        "active",
        "disabled_reason",
        "failing_since",
        "rate_limit",
        "consecutive_failures",
        "circuit_open_until",
        "user",
        "team",
        "event_type",
        "platform_oauth_client",
        "app",
        "platform",
        "has_secret",
        "previous_secret_expires_at",
        "created_at",
    )
    # Staff may change where and what a webhook sends, and switch it on or off; nothing else.
    readonly_fields = tuple(
        field
        for field in fields
        if field not in ("subscriber_url", "event_triggers", "payload_template", "active", "rate_limit")
    )
    inlines = (ScheduledTriggerInline, WebhookDeliveryInline)
    actions = ("deactivate",)

    def has_add_permission(self, request):
        return False  # created over the API, where ownership rules and the secret hand-over live

    @admin.display(description="owner")
    def owner(self, webhook):
        return webhook.event_type or webhook.team or webhook.user or webhook.platform_oauth_client

    @admin.display(description="triggers")
    def triggers(self, webhook):
        return ", ".join(webhook.event_triggers)

    @admin.display(boolean=True, description="has secret")
    def has_secret(self, webhook):
        return bool(webhook.secret)

    def save_model(self, request, obj, form, change):
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in form.cleaned_data}
        webhook_update(webhook=obj, **changes)

    @admin.action(description="Deactivate the selected webhooks (pending deliveries are cancelled)")
    def deactivate(self, request, queryset):
        for webhook in queryset.filter(active=True):
            webhook_deactivate(webhook=webhook, reason=f"Deactivated by operator {request.user}.")
        self.message_user(request, "Deactivated.", messages.SUCCESS)


class DeliveryAttemptInline(ReadOnlyInline):
    model = DeliveryAttempt
    show_change_link = False
    fields = (
        "attempt_number",
        "attempted_at",
        "duration_ms",
        "response_status",
        "error_class",
        "error_message",
        "response_body_start",
    )
    readonly_fields = fields

    @admin.display(description="response body (start)")
    def response_body_start(self, attempt):
        return attempt.response_body[:200]


class TriggerEventFilter(admin.SimpleListFilter):
    """The triggers a delivery can carry, from the list of triggers (the stock filter on a column
    without choices would read every delivery for its distinct values)."""

    title = "trigger event"
    parameter_name = "trigger_event__exact"

    def lookups(self, request, model_admin):
        return [*WebhookTrigger.choices, (PING_TRIGGER, PING_TRIGGER)]

    def queryset(self, request, queryset):
        return queryset.filter(trigger_event=self.value()) if self.value() else queryset


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ScaledAdminMixin, admin.ModelAdmin):
    list_display = ("id", "subscriber", "trigger_event", "status", "attempts", "next_attempt_at", "created_at")
    list_filter = ("status", TriggerEventFilter, autocomplete_filter("webhook"), "created_at")
    search_by = (
        SearchField("message_id", "webhook-id (msg_…)", PREFIX),
        SearchField("webhook__subscriber_url", "subscriber URL", CONTAINS),
    )
    list_select_related = ("webhook",)
    date_hierarchy = "created_at"
    fields = (
        "id",
        "webhook",
        "trigger_event",
        "status",
        "message_id",
        "attempts",
        "retry_index",
        "next_attempt_at",
        "lease_expires_at",
        "last_attempt_at",
        "delivered_at",
        "event_created_at",
        "created_at",
        "payload",
    )
    readonly_fields = fields
    inlines = (DeliveryAttemptInline,)
    actions = ("redeliver",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="webhook", ordering="webhook__subscriber_url")
    def subscriber(self, delivery):
        return format_html("{}", delivery.webhook.subscriber_url)

    @admin.action(description="Redeliver the selected deliveries (same webhook-id, schedule restarts)")
    def redeliver(self, request, queryset):
        sent, refused = 0, []
        for delivery in queryset.select_related("webhook"):
            try:
                delivery_redeliver(delivery=delivery)
                sent += 1
            except Conflict as error:
                refused.append(f"#{delivery.pk}: {error.detail}")
        if sent:
            self.message_user(request, f"{sent} delivery(ies) queued again.", messages.SUCCESS)
        if refused:
            self.message_user(request, "Not redelivered: " + "; ".join(refused), messages.WARNING)
