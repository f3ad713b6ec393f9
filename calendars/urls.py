from django.urls import re_path

from calendars.feed_views import CalendarFeedReadView, CalendarFeedView
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

urlpatterns = [
    # A user's bookings as a calendar feed (calendars.feeds): its secret address, and its management.
    re_path(
        r"^calendar-feeds/(?P<variant>full|busy)/(?P<token>[A-Za-z0-9_-]{1,128})\.ics$",
        CalendarFeedReadView.as_view(),
        name="calendar-feed",
    ),
    re_path(r"^calendar-feeds/(?P<variant>full|busy)$", CalendarFeedView.as_view(), name="calendar-feed-variant"),
    *router.urls,
]
