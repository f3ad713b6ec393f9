"""Smaller v2 operations of Cal.com's public API: a booking's location
(`PATCH /v2/bookings/{uid}/location`), an API key's refresh (`POST /v2/api-keys/refresh`) and
the removal of all of an event type's webhooks (`DELETE /v2/event-types/{id}/webhooks`)."""

from datetime import timedelta

from django.utils import timezone
from rest_framework import serializers

from accounts.services import api_key_refresh
from calv2 import inputs, shapes
from calv2.views import bookings, webhooks
from calv2.views.base import V2View
from core.exceptions import Forbidden
from core.scopes import READ_PROFILE, WRITE_BOOKING, WRITE_WEBHOOK
from scheduling.serializers.bookings import StrictIntegerField
from scheduling.services.locations import booking_location_update
from webhooks.services import webhooks_delete_all


class BookingLocationInput(inputs.V2Input):
    location = inputs.LocationField()


class BookingLocationView(bookings.BookingMixin, V2View):
    """200 with the booking, its `location` changed (Cal.com's string or location object)."""

    scopes = {"PATCH": WRITE_BOOKING}

    def patch(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(BookingLocationInput)
        booking_location_update(booking=booking, actor=request.user, location=data["location"])
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))


class RefreshApiKeyInput(inputs.V2Input):
    api_key_days_valid = StrictIntegerField(min_value=1, max_value=3650, required=False)
    api_key_never_expires = serializers.BooleanField(required=False)


class ApiKeyRefreshView(V2View):
    """The API key the request is made with is replaced by a new one, valid `apiKeyDaysValid` days
    (default 30) or for ever (`apiKeyNeverExpires`); the answer is the new key, shown once."""

    scopes = {"POST": READ_PROFILE}

    def post(self, request):
        if request.auth.kind != "api_key":
            raise Forbidden("Send the API key to refresh as the bearer credential.")
        data = self.body(RefreshApiKeyInput)
        expires_at = None
        if not data.get("api_key_never_expires"):
            expires_at = timezone.now() + timedelta(days=data.get("api_key_days_valid", 30))
        _, raw_key = api_key_refresh(api_key_id=request.auth.id, expires_at=expires_at)
        return self.success({"apiKey": raw_key})


class EventTypeWebhooksView(webhooks.WebhooksView):
    """List and create (calv2.views.webhooks), plus delete every webhook of the event type that
    the caller manages."""

    scopes = {**webhooks.WebhooksView.scopes, "DELETE": WRITE_WEBHOOK}

    def delete(self, request, **kwargs):
        count = webhooks_delete_all(webhooks=self.owned_webhooks())
        return self.success(f"{count} webhooks deleted")
