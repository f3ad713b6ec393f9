from core.query import QueryParameters, Text
from core.scopes import READ_EVENT_TYPE, WRITE_EVENT_TYPE
from core.viewsets import (
    CrudResourceViewSet,
)
from scheduling.selectors.event_types import event_type_list
from scheduling.serializers.event_types import (
    EventTypeCreateSerializer,
    EventTypeSerializer,
    EventTypeUpdateSerializer,
)
from scheduling.services.event_types import event_type_create_as, event_type_delete, event_type_update


class EventTypeFilters(QueryParameters):
    # As in Cal.com's v1: an exact match among the event types the caller may see.
    slug = Text(description="Only the event types with this slug.")


class EventTypeViewSet(CrudResourceViewSet):
    """Event types the caller owns or whose team they belong to (writes: owner, team ADMIN/OWNER)."""

    selector = event_type_list
    scopes = {
        "GET": READ_EVENT_TYPE,
        "POST": WRITE_EVENT_TYPE,
        "PATCH": WRITE_EVENT_TYPE,
        "DELETE": WRITE_EVENT_TYPE,
    }
    envelope_singular = "event_type"
    envelope_plural = "event_types"
    resource_label = "Event type"
    serializer_class = EventTypeSerializer
    input_serializer_class = EventTypeCreateSerializer
    update_serializer_class = EventTypeUpdateSerializer
    conflict_actions = ("create", "partial_update")  # a slug the owner already uses
    list_filters = EventTypeFilters

    def perform_create(self, data):
        return event_type_create_as(actor=self.request.user, owner_id=data.pop("user_id", None), **data)

    def perform_update(self, instance, data):
        return event_type_update(event_type=instance, actor=self.request.user, **data)

    def perform_destroy(self, instance):
        event_type_delete(event_type=instance, actor=self.request.user)
