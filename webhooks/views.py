"""Webhooks and their delivery log, test sends, redelivery and secret rotation; `/hooks` is the
same set of endpoints under the older name (docs/webhooks.md)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.exceptions import NotFound
from core.pagination import PagePagination
from core.query import Choice, Instant, QueryParameters
from core.scopes import READ_WEBHOOK, WRITE_WEBHOOK
from core.viewsets import (
    CrudResourceViewSet,
    ListResourceMixin,
    ResourceViewSet,
    RetrieveResourceMixin,
)
from webhooks.models import DeliveryStatus
from webhooks.recovery import check_recover_rate
from webhooks.selectors import delivery_list, webhook_get, webhook_list
from webhooks.serializers import (
    DeliveryAttemptSerializer,
    DeliveryDetailSerializer,
    DeliverySerializer,
    EmptyBodySerializer,
    RecoverSerializer,
    WebhookCreateSerializer,
    WebhookSerializer,
    WebhookUpdateSerializer,
)
from webhooks.services import (
    deliveries_recover,
    delivery_redeliver,
    webhook_create,
    webhook_delete,
    webhook_rotate_secret,
    webhook_send_test,
    webhook_update,
)

UUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
SCOPES = {"GET": READ_WEBHOOK, "POST": WRITE_WEBHOOK, "PATCH": WRITE_WEBHOOK, "DELETE": WRITE_WEBHOOK}


WEBHOOK_ENVELOPE = inline_serializer("WebhookSecretEnvelope", {"webhook": WebhookSerializer()})
DELIVERY_ENVELOPE = inline_serializer("DeliveryDetailEnvelope", {"delivery": DeliveryDetailSerializer()})
RECOVER_RESULT = inline_serializer(
    "WebhookRecoverResult",
    {
        "queued": serializers.IntegerField(help_text="Deliveries queued again by this call."),
        "remaining": serializers.IntegerField(
            help_text="Matching deliveries beyond this call's limit (RECOVER_MAX_DELIVERIES): call again."
        ),
        "message": serializers.CharField(),
    },
)
TEST_RESULT = inline_serializer(
    "WebhookTestResult", {"attempt": DeliveryAttemptSerializer(), "delivery": DeliveryDetailSerializer()}
)


def require_empty_body(request) -> None:
    EmptyBodySerializer(data=request.data if request.data else {}).is_valid(raise_exception=True)


class WebhookViewSet(CrudResourceViewSet):
    """Subscriptions: the caller's own, their event types', and their administered teams'."""

    selector = webhook_list
    scopes = SCOPES
    envelope_singular = "webhook"
    envelope_plural = "webhooks"
    serializer_class = WebhookSerializer
    input_serializer_class = WebhookCreateSerializer
    update_serializer_class = WebhookUpdateSerializer
    lookup_value_regex = UUID_PATTERN
    lookup_schema = {"type": "string", "format": "uuid"}
    conflict_actions = ("create", "partial_update", "recover")

    def get_output_serializer(self, instance):
        context = self.get_serializer_context()
        data = self.request.data if isinstance(self.request.data, dict) else {}
        context["reveal_secret"] = self.action in ("create", "rotate_secret") or (
            self.action == "partial_update" and bool(data.get("secret"))
        )
        return self.get_output_serializer_class()(instance, context=context)

    def perform_create(self, data):
        return webhook_create(actor=self.request.user, **data)

    def perform_update(self, instance, data):
        return webhook_update(webhook=instance, **data)

    def perform_destroy(self, instance):
        webhook_delete(webhook=instance)

    @extend_schema(request=None, responses={200: TEST_RESULT})
    @action(detail=True, methods=["post"], url_path="test")
    def send_test(self, request, *args, **kwargs):
        """Send a signed PING now and answer with the logged attempt, whatever the receiver did."""
        webhook = self.get_object()
        require_empty_body(request)
        attempt = webhook_send_test(webhook=webhook)
        delivery = delivery_list(webhook=webhook).get(pk=attempt.delivery_id)
        return Response(
            {
                "attempt": DeliveryAttemptSerializer(attempt).data,
                "delivery": DeliveryDetailSerializer(delivery).data,
            }
        )

    @extend_schema(request=None, responses={200: WEBHOOK_ENVELOPE})
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, *args, **kwargs):
        """A new secret, shown once; the old one keeps signing alongside it for the grace period."""
        webhook = self.get_object()
        require_empty_body(request)
        webhook = self.reload(webhook_rotate_secret(webhook=webhook))
        return Response({self.envelope_singular: self.get_output_serializer(webhook).data})

    @extend_schema(request=RecoverSerializer, responses={202: RECOVER_RESULT})
    @action(detail=True, methods=["post"], url_path="recover")
    def recover(self, request, *args, **kwargs):
        """Queue again every delivery in `status` (default `failed`) whose event happened in
        [`since`, `until`), each with its original `webhook-id`. Idempotent: a second call while
        they are pending queues nothing new. One call per webhook every
        RECOVER_MIN_INTERVAL_SECONDS (10 s), else a 429 with Retry-After; `since` may reach back
        DELIVERY_RETENTION_SECONDS (30 days)."""
        webhook = self.get_object()
        serializer = RecoverSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        check_recover_rate(webhook)
        result = deliveries_recover(webhook=webhook, **serializer.validated_data)
        message = f"{result['queued']} deliveries queued again."
        return Response({**result, "message": message}, status=status.HTTP_202_ACCEPTED)


class DeliveryFilters(QueryParameters):
    status = Choice(DeliveryStatus.values, description="Only deliveries in this status.")
    since = Instant(description="Only events at or after this time (RFC 3339; a date is its start in UTC).")
    until = Instant(description="Only events before this time (RFC 3339).")


class DeliveryPagination(PagePagination):
    """Pages, or `after` (core.keyset): the stable way to walk the log while it grows at the top.
    `cursor` is the name this list gave the same parameter first."""

    after_query_params = ("after", "cursor")


class WebhookDeliveryViewSet(ListResourceMixin, RetrieveResourceMixin, ResourceViewSet):
    """The delivery log of one webhook, newest first; `?status=` filters."""

    selector = delivery_list
    scopes = {"GET": READ_WEBHOOK, "POST": WRITE_WEBHOOK}
    envelope_singular = "delivery"
    envelope_plural = "deliveries"
    resource_label = "Delivery"
    serializer_class = DeliverySerializer
    conflict_actions = ("redeliver",)
    list_filters = DeliveryFilters
    filters_by_user = False  # the log of one webhook, found by its id
    pagination_class = DeliveryPagination

    def get_webhook(self):
        if not hasattr(self, "_webhook"):
            webhook_id = self.kwargs["webhook_id"]
            self._webhook = webhook_get(user=self.request.user, webhook_id=webhook_id)
            if self._webhook is None:
                raise NotFound(f"Webhook {webhook_id} does not exist.")
        return self._webhook

    def selector_arguments(self) -> dict:
        return {"webhook": self.get_webhook()}  # the webhook's visibility is the caller's

    def get_output_serializer_class(self):
        return DeliveryDetailSerializer

    @extend_schema(responses={200: DELIVERY_ENVELOPE})
    def retrieve(self, request, *args, **kwargs):
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(request=None, responses={202: DELIVERY_ENVELOPE})
    @action(detail=True, methods=["post"])
    def redeliver(self, request, *args, **kwargs):
        """Send again from the start of the retry schedule, with the same `webhook-id`."""
        delivery = self.get_object()
        require_empty_body(request)
        delivery = self.reload(delivery_redeliver(delivery=delivery))
        return Response(
            {self.envelope_singular: self.get_output_serializer(delivery).data}, status=status.HTTP_202_ACCEPTED
        )


# `/hooks` answers exactly like `/webhooks`: Cal.com's API v1 rewrote `/api/hooks/*` to
# `/api/webhooks/*` "for backwards compatibility with old webhook URLs", and n8n's Cal.com trigger
# (its default "Before v2.0" setting), Pipedream's sources and Activepieces' old triggers still
# subscribe there. The aliases stay out of the OpenAPI document, which names them once instead of
# listing every operation twice.


class HookAliasViewSet(WebhookViewSet):
    schema = None


class HookAliasDeliveryViewSet(WebhookDeliveryViewSet):
    schema = None
