from calendars.views import (
    BookingReferenceViewSet,
    ConnectedCalendarViewSet,
    DestinationCalendarViewSet,
    SelectedCalendarViewSet,
)
from core.viewsets import ResourceRouter

router = ResourceRouter()
router.register("connected-calendars", ConnectedCalendarViewSet, basename="connected-calendar")
router.register("selected-calendars", SelectedCalendarViewSet, basename="selected-calendar")
router.register("destination-calendars", DestinationCalendarViewSet, basename="destination-calendar")
router.register("booking-references", BookingReferenceViewSet, basename="booking-reference")

urlpatterns = router.urls
