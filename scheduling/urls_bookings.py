from django.urls import path

from core.viewsets import ResourceRouter
from scheduling.views.attendees import AttendeeViewSet, TeamEventTypeViewSet
from scheduling.views.bookings import BookingViewSet
from scheduling.views.event_types import EventTypeViewSet
from scheduling.views.slots import SlotViewSet

router = ResourceRouter()
router.register("event-types", EventTypeViewSet, basename="event-type")
router.register("slots", SlotViewSet, basename="slot")
router.register("bookings", BookingViewSet, basename="booking")
router.register("attendees", AttendeeViewSet, basename="attendee")

urlpatterns = [
    *router.urls,
    path(
        "teams/<str:team_id>/event-types",
        TeamEventTypeViewSet.as_view({"get": "list"}),
        name="team-event-types",
    ),
]
