"""Webhooks and their delivery log, test sends, redelivery and secret rotation; `/hooks` is the
same set of endpoints under the older name (docs/webhooks.md)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.exceptions import NotFound
from core.query import Choice, QueryParameters
from core.scopes import READ_WEBHOOK, WRITE_WEBHOOK
from core.viewsets import (
    CreateModelMixin,
    DestroyModelMixin,
    ListModelMixin,
    ResourceViewSet,
    RetrieveModelMixin,
    UpdateModelMixin,
)
from webhooks.models import DeliveryStatus
from webhooks.selectors import delivery_list, webhook_get, webhook_list
from webhooks.serializers import (
    DeliveryAttemptSerializer,
    DeliveryDetailSerializer,
    DeliverySerializer,
    EmptyBodySerializer,
    WebhookCreateSerializer,
    WebhookSerializer,
    WebhookUpdateSerializer,
)
from webhooks.services import (
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
TEST_RESULT = inline_serializer(
    "WebhookTestResult", {"attempt": DeliveryAttemptSerializer(), "delivery": DeliveryDetailSerializer()}
)


def require_empty_body(request) -> None:
    EmptyBodySerializer(data=request.data if request.data else {}).is_valid(raise_exception=True)


class WebhookViewSet(
    ListModelMixin, RetrieveModelMixin, CreateModelMixin, UpdateModelMixin, DestroyModelMixin, ResourceViewSet
):
    """Subscriptions: the caller's own, their event types', and their administered teams'."""

    scopes = SCOPES
    envelope_singular = "webhook"
    envelope_plural = "webhooks"
    serializer_class = WebhookSerializer
    input_serializer_class = WebhookCreateSerializer
    update_serializer_class = WebhookUpdateSerializer
    lookup_value_regex = UUID_PATTERN
    lookup_schema = {"type": "string", "format": "uuid"}
    conflict_actions = ("create", "partial_update")

    def get_queryset(self):
        user_ids = self.requested_user_ids() if self.action == "list" else None
        return webhook_list(user=self.request.user, user_ids=user_ids)

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


class DeliveryFilters(QueryParameters):
    status = Choice(DeliveryStatus.values, description="Only deliveries in this status.")


class WebhookDeliveryViewSet(ListModelMixin, RetrieveModelMixin, ResourceViewSet):
    """The delivery log of one webhook, newest first; `?status=` filters."""

    scopes = {"GET": READ_WEBHOOK, "POST": WRITE_WEBHOOK}
    envelope_singular = "delivery"
    envelope_plural = "deliveries"
    resource_label = "Delivery"
    serializer_class = DeliverySerializer
    conflict_actions = ("redeliver",)
    list_filters = DeliveryFilters
    filters_by_user = False  # the log of one webhook, found by its id

    def get_webhook(self):
        if not hasattr(self, "_webhook"):
            webhook_id = self.kwargs["webhook_id"]
            self._webhook = webhook_get(user=self.request.user, webhook_id=webhook_id)
            if self._webhook is None:
                raise NotFound(f"Webhook {webhook_id} does not exist.")
        return self._webhook

    def get_queryset(self):
        webhook = self.get_webhook()
        if self.action == "list":
            return delivery_list(webhook=webhook, **self.list_filters.parse(self.request))
        return delivery_list(webhook=webhook)

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
