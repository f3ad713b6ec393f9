from core.viewsets import ResourceRouter
from payments.views import PaymentViewSet

router = ResourceRouter()
router.register("payments", PaymentViewSet, basename="payment")

urlpatterns = router.urls
