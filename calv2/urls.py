"""Cal.com API v2's paths (no trailing slash), served by calv2.views."""

from django.urls import path, re_path

from calv2 import openapi, views
from core import views as core_views

UID = "<str:uid>"

urlpatterns = [
    path("openapi.json", openapi.openapi_json, name="v2-openapi-json"),
    path("me", views.MeView.as_view(), name="v2-me"),
    path("webhooks", views.WebhooksView.as_view(), name="v2-webhooks"),
    path("webhooks/<uuid:webhook_id>", views.WebhookView.as_view(), name="v2-webhook"),
    path("event-types", views.EventTypesView.as_view(), name="v2-event-types"),
    path("event-types/<int:event_type_id>", views.EventTypeView.as_view(), name="v2-event-type"),
    path("schedules", views.SchedulesView.as_view(), name="v2-schedules"),
    path("schedules/default", views.DefaultScheduleView.as_view(), name="v2-schedule-default"),
    path("schedules/<int:schedule_id>", views.ScheduleView.as_view(), name="v2-schedule"),
    path("event-types/<int:event_type_id>/webhooks", views.WebhooksView.as_view(), name="v2-event-type-webhooks"),
    path(
        "event-types/<int:event_type_id>/webhooks/<uuid:webhook_id>",
        views.WebhookView.as_view(),
        name="v2-event-type-webhook",
    ),
    path("bookings", views.BookingsView.as_view(), name="v2-bookings"),
    path(f"bookings/{UID}", views.BookingView.as_view(), name="v2-booking"),
    path(f"bookings/{UID}/cancel", views.BookingCancelView.as_view(), name="v2-booking-cancel"),
    path(f"bookings/{UID}/reschedule", views.BookingRescheduleView.as_view(), name="v2-booking-reschedule"),
    path(f"bookings/{UID}/confirm", views.BookingConfirmView.as_view(), name="v2-booking-confirm"),
    path(f"bookings/{UID}/decline", views.BookingDeclineView.as_view(), name="v2-booking-decline"),
    path("slots", views.SlotsView.as_view(), name="v2-slots"),
    path("teams", views.TeamsView.as_view(), name="v2-teams"),
    path("timezones", views.TimeZonesView.as_view(), name="v2-timezones"),
    # Anything else under /v2/ is the v2 404 envelope (calv2.wire rewrites core's JSON 404).
    re_path(r"^", core_views.api_not_found, name="v2-not-found"),
]
