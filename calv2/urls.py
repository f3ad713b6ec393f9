"""Cal.com API v2's paths (no trailing slash), served by calv2.views."""

from django.urls import path, re_path

from calv2 import openapi
from calv2.views import bookings, calendars, event_types, profile, schedules, slots, webhooks
from core import views as core_views

UID = "<str:uid>"

urlpatterns = [
    path("openapi.json", openapi.openapi_json, name="v2-openapi-json"),
    path("me", profile.MeView.as_view(), name="v2-me"),
    path("webhooks", webhooks.WebhooksView.as_view(), name="v2-webhooks"),
    path("webhooks/<uuid:webhook_id>", webhooks.WebhookView.as_view(), name="v2-webhook"),
    path("event-types", event_types.EventTypesView.as_view(), name="v2-event-types"),
    path("event-types/<int:event_type_id>", event_types.EventTypeView.as_view(), name="v2-event-type"),
    path("schedules", schedules.SchedulesView.as_view(), name="v2-schedules"),
    path("schedules/default", schedules.DefaultScheduleView.as_view(), name="v2-schedule-default"),
    path("schedules/<int:schedule_id>", schedules.ScheduleView.as_view(), name="v2-schedule"),
    path("event-types/<int:event_type_id>/webhooks", webhooks.WebhooksView.as_view(), name="v2-event-type-webhooks"),
    path(
        "event-types/<int:event_type_id>/webhooks/<uuid:webhook_id>",
        webhooks.WebhookView.as_view(),
        name="v2-event-type-webhook",
    ),
    path("bookings", bookings.BookingsView.as_view(), name="v2-bookings"),
    path(f"bookings/{UID}", bookings.BookingView.as_view(), name="v2-booking"),
    path(f"bookings/{UID}/cancel", bookings.BookingCancelView.as_view(), name="v2-booking-cancel"),
    path(f"bookings/{UID}/reschedule", bookings.BookingRescheduleView.as_view(), name="v2-booking-reschedule"),
    path(f"bookings/{UID}/confirm", bookings.BookingConfirmView.as_view(), name="v2-booking-confirm"),
    path(f"bookings/{UID}/decline", bookings.BookingDeclineView.as_view(), name="v2-booking-decline"),
    path(f"bookings/{UID}/mark-absent", bookings.BookingMarkAbsentView.as_view(), name="v2-booking-mark-absent"),
    path(f"bookings/{UID}/attendees", bookings.BookingAttendeesView.as_view(), name="v2-booking-attendees"),
    path("slots", slots.SlotsView.as_view(), name="v2-slots"),
    *calendars.urlpatterns,
    path("teams", profile.TeamsView.as_view(), name="v2-teams"),
    path("timezones", profile.TimeZonesView.as_view(), name="v2-timezones"),
    # Anything else under /v2/ is the v2 404 envelope (calv2.wire rewrites core's JSON 404).
    re_path(r"^", core_views.api_not_found, name="v2-not-found"),
]
