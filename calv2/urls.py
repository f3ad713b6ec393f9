"""Cal.com API v2's paths (no trailing slash), served by calv2.views."""

from django.urls import path, re_path

from accounts.oauth.views import token as oauth_token
from calv2 import openapi
from calv2.views import (
    bookings,
    calendar_oauth,
    calendars,
    changes,
    conferencing,
    event_types,
    holds,
    oauth2,
    participants,
    private_links,
    profile,
    schedules,
    slots,
    team_memberships,
    teams,
    webhooks,
    why_not,
)
from core import views as core_views

UID = "<str:uid>"

urlpatterns = [
    path("openapi.json", openapi.openapi_json, name="v2-openapi-json"),
    path("me", profile.MeView.as_view(), name="v2-me"),
    path("webhooks", webhooks.WebhooksView.as_view(), name="v2-webhooks"),
    path("webhooks/<uuid:webhook_id>", webhooks.WebhookView.as_view(), name="v2-webhook"),
    path("event-types", event_types.EventTypesView.as_view(), name="v2-event-types"),
    path("event-types/<int:event_type_id>", event_types.EventTypeView.as_view(), name="v2-event-type"),
    path(
        "event-types/<int:event_type_id>/scheduling-config",
        teams.EventTypeSchedulingConfigView.as_view(),
        name="v2-event-type-scheduling-config",
    ),
    path("schedules", schedules.SchedulesView.as_view(), name="v2-schedules"),
    path("schedules/default", schedules.DefaultScheduleView.as_view(), name="v2-schedule-default"),
    path("schedules/<int:schedule_id>", schedules.ScheduleView.as_view(), name="v2-schedule"),
    path(
        "event-types/<int:event_type_id>/webhooks",
        changes.EventTypeWebhooksView.as_view(),
        name="v2-event-type-webhooks",
    ),
    path(
        "event-types/<int:event_type_id>/webhooks/<uuid:webhook_id>",
        webhooks.WebhookView.as_view(),
        name="v2-event-type-webhook",
    ),
    path(
        "event-types/<int:event_type_id>/private-links",
        private_links.PrivateLinksView.as_view(),
        name="v2-event-type-private-links",
    ),
    path(
        "event-types/<int:event_type_id>/private-links/<str:link_id>",
        private_links.PrivateLinkView.as_view(),
        name="v2-event-type-private-link",
    ),
    path("bookings", bookings.BookingsView.as_view(), name="v2-bookings"),
    path(f"bookings/{UID}", bookings.BookingView.as_view(), name="v2-booking"),
    path(f"bookings/{UID}/cancel", bookings.BookingCancelView.as_view(), name="v2-booking-cancel"),
    path(f"bookings/{UID}/reschedule", bookings.BookingRescheduleView.as_view(), name="v2-booking-reschedule"),
    path(f"bookings/{UID}/confirm", bookings.BookingConfirmView.as_view(), name="v2-booking-confirm"),
    path(f"bookings/{UID}/decline", bookings.BookingDeclineView.as_view(), name="v2-booking-decline"),
    path(f"bookings/{UID}/mark-absent", bookings.BookingMarkAbsentView.as_view(), name="v2-booking-mark-absent"),
    path(f"bookings/{UID}/attendees", participants.BookingAttendeesView.as_view(), name="v2-booking-attendees"),
    path(
        f"bookings/{UID}/attendees/<int:attendee_id>",
        participants.BookingAttendeeView.as_view(),
        name="v2-booking-attendee",
    ),
    path(f"bookings/{UID}/guests", participants.BookingGuestsView.as_view(), name="v2-booking-guests"),
    path(f"bookings/{UID}/location", changes.BookingLocationView.as_view(), name="v2-booking-location"),
    path("api-keys/refresh", changes.ApiKeyRefreshView.as_view(), name="v2-api-keys-refresh"),
    path("conferencing", conferencing.ConferencingAppsView.as_view(), name="v2-conferencing"),
    path("auth/oauth2/token", oauth_token, name="v2-oauth2-token"),
    path("auth/oauth2/clients/<str:client_id>", oauth2.client_info, name="v2-oauth2-client"),
    path("slots/reservations", holds.SlotReservationsView.as_view(), name="v2-slot-reservations"),
    path("slots/reservations/<str:uid>", holds.SlotReservationView.as_view(), name="v2-slot-reservation"),
    path("me/ooo", holds.OutOfOfficeEntriesView.as_view(), name="v2-me-ooo"),
    path("me/ooo/<int:ooo_id>", holds.OutOfOfficeEntryView.as_view(), name="v2-me-ooo-entry"),
    path(f"bookings/{UID}/reassign", teams.BookingReassignView.as_view(), name="v2-booking-reassign"),
    path(f"bookings/{UID}/reassign/<int:user_id>", teams.BookingReassignView.as_view(), name="v2-booking-reassign-to"),
    path("slots", slots.SlotsView.as_view(), name="v2-slots"),
    path("slots/why-not", why_not.WhyNotView.as_view(), name="v2-slots-why-not"),
    path("teams", team_memberships.TeamListView.as_view(), name="v2-teams"),
    path("teams/<int:team_id>", team_memberships.TeamView.as_view(), name="v2-team"),
    path("teams/<int:team_id>/bookings", team_memberships.TeamBookingsView.as_view(), name="v2-team-bookings"),
    path("teams/<int:team_id>/memberships", team_memberships.TeamMembershipsView.as_view(), name="v2-team-memberships"),
    path(
        "teams/<int:team_id>/memberships/<int:membership_id>",
        team_memberships.TeamMembershipView.as_view(),
        name="v2-team-membership",
    ),
    path("teams/<int:team_id>/event-types", teams.TeamEventTypesView.as_view(), name="v2-team-event-types"),
    path(
        "teams/<int:team_id>/event-types/<int:event_type_id>",
        teams.TeamEventTypeView.as_view(),
        name="v2-team-event-type",
    ),
    path(
        "teams/<int:team_id>/event-types/<int:event_type_id>/webhooks",
        teams.TeamEventTypeWebhooksView.as_view(),
        name="v2-team-event-type-webhooks",
    ),
    path(
        "teams/<int:team_id>/event-types/<int:event_type_id>/webhooks/<uuid:webhook_id>",
        teams.TeamEventTypeWebhookView.as_view(),
        name="v2-team-event-type-webhook",
    ),
    *calendars.urlpatterns,
    *calendar_oauth.urlpatterns,
    path("timezones", profile.TimeZonesView.as_view(), name="v2-timezones"),
    # Anything else under /v2/ is the v2 404 envelope (calv2.wire rewrites core's JSON 404).
    re_path(r"^", core_views.api_not_found, name="v2-not-found"),
]
