from django.urls import path

from core.viewsets import ResourceRouter
from scheduling.views.attendees import AttendeeViewSet, TeamEventTypeViewSet
from scheduling.views.availability import AvailabilityViewSet, UserAvailabilityViewSet
from scheduling.views.bookings import BookingViewSet
from scheduling.views.event_types import EventTypeViewSet
from scheduling.views.slots import SlotViewSet
from scheduling.views.why_not import WhyNotViewSet

router = ResourceRouter()
router.register("event-types", EventTypeViewSet, basename="event-type")
router.register("slots", SlotViewSet, basename="slot")
router.register("bookings", BookingViewSet, basename="booking")
router.register("availability", AvailabilityViewSet, basename="availability")
router.register("attendees", AttendeeViewSet, basename="attendee")

urlpatterns = [
    path("slots/why-not", WhyNotViewSet.as_view({"get": "list"}), name="slot-why-not"),
    *router.urls,
    path(
        "users/<str:user_id>/availability",
        UserAvailabilityViewSet.as_view({"get": "list"}),
        name="user-availability",
    ),
    path(
        "teams/<str:team_id>/event-types",
        TeamEventTypeViewSet.as_view({"get": "list"}),
        name="team-event-types",
    ),
]
