from core.viewsets import ResourceRouter
from scheduling.views.bookings import BookingViewSet
from scheduling.views.event_types import EventTypeViewSet
from scheduling.views.slots import SlotViewSet

router = ResourceRouter()
router.register("event-types", EventTypeViewSet, basename="event-type")
router.register("slots", SlotViewSet, basename="slot")
router.register("bookings", BookingViewSet, basename="booking")

urlpatterns = router.urls
