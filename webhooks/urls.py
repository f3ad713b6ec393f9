from django.urls import path

from core.viewsets import ResourceRouter
from webhooks.feed import EventFeedView
from webhooks.views import (
    UUID_PATTERN,
    HookAliasDeliveryViewSet,
    HookAliasViewSet,
    WebhookDeliveryViewSet,
    WebhookViewSet,
)

router = ResourceRouter()
router.register("webhooks", WebhookViewSet, basename="webhook")
router.register(
    rf"webhooks/(?P<webhook_id>{UUID_PATTERN})/deliveries", WebhookDeliveryViewSet, basename="webhook-delivery"
)
router.register("hooks", HookAliasViewSet, basename="hook")
router.register(rf"hooks/(?P<webhook_id>{UUID_PATTERN})/deliveries", HookAliasDeliveryViewSet, basename="hook-delivery")

urlpatterns = [path("events", EventFeedView.as_view(), name="event-feed"), *router.urls]
