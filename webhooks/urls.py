from core.viewsets import ResourceRouter
from webhooks.views import UUID_PATTERN, WebhookDeliveryViewSet, WebhookViewSet

router = ResourceRouter()
router.register("webhooks", WebhookViewSet, basename="webhook")
router.register(
    rf"webhooks/(?P<webhook_id>{UUID_PATTERN})/deliveries", WebhookDeliveryViewSet, basename="webhook-delivery"
)

urlpatterns = router.urls
