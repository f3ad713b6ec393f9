"""`/v2/event-types/{eventTypeId}/private-links[/{linkId}]`: Cal.com's private links of an event
type, for whoever may change the event type (its owner, its team's admins and owners)."""

from django.utils import timezone
from rest_framework import status

from calv2 import inputs
from calv2.shapes import iso_ms
from calv2.views.base import V2View
from core.exceptions import NotFound
from core.scopes import READ_EVENT_TYPE, WRITE_EVENT_TYPE
from private_links.selectors import private_links_of
from private_links.services import (
    managed_event_type,
    private_link_create,
    private_link_delete,
    private_link_update,
)
from scheduling.payloads import booker_url
from scheduling.serializers.bookings import InstantField, StrictIntegerField


class PrivateLinkInput(inputs.V2Input):
    expires_at = InstantField(required=False)
    max_usage_count = StrictIntegerField(min_value=1, max_value=10**6, required=False)


def private_link_shape(link, now) -> dict:
    """Cal.com's `TimeBasedPrivateLinkOutput` or `UsageBasedPrivateLinkOutput`."""
    body = {
        "linkId": link.link_id,
        "eventTypeId": link.event_type_id,
        "bookingUrl": f"{booker_url()}/d/{link.link_id}/{link.event_type.slug}",
    }
    if link.expires_at is not None:
        return {**body, "isExpired": link.expires_at <= now, "expiresAt": iso_ms(link.expires_at)}
    return {
        **body,
        "isExpired": link.usage_count >= link.max_usage_count,
        "maxUsageCount": link.max_usage_count,
        "usageCount": link.usage_count,
    }


class PrivateLinkMixin:
    scopes = {"GET": READ_EVENT_TYPE, "POST": WRITE_EVENT_TYPE, "PATCH": WRITE_EVENT_TYPE, "DELETE": WRITE_EVENT_TYPE}

    def links(self, event_type_id: int):
        return private_links_of(event_type=managed_event_type(actor=self.request.user, event_type_id=event_type_id))

    def link(self, event_type_id: int, link_id: str):
        link = self.links(event_type_id).filter(link_id=link_id).first()
        if link is None:
            raise NotFound(f"Private link {link_id} not found.")
        return link


class PrivateLinksView(PrivateLinkMixin, V2View):
    def get(self, request, event_type_id):
        now = timezone.now()
        return self.success([private_link_shape(link, now) for link in self.links(event_type_id)])

    def post(self, request, event_type_id):
        data = self.body(PrivateLinkInput)
        link = private_link_create(actor=request.user, event_type_id=event_type_id, **data)
        return self.success(private_link_shape(link, timezone.now()), status_code=status.HTTP_201_CREATED)


class PrivateLinkView(PrivateLinkMixin, V2View):
    def patch(self, request, event_type_id, link_id):
        link = self.link(event_type_id, link_id)
        data = self.body(PrivateLinkInput)
        return self.success(private_link_shape(private_link_update(link=link, **data), timezone.now()))

    def delete(self, request, event_type_id, link_id):
        link = self.link(event_type_id, link_id)
        private_link_delete(link=link)
        return self.success({"linkId": link_id, "message": "Private link deleted successfully"})
