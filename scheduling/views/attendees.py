"""Cal.com v1's `/attendees` and `/teams/{teamId}/event-types`."""

from core.scopes import READ_BOOKING, READ_EVENT_TYPE, WRITE_BOOKING
from core.viewsets import CrudResourceViewSet, ListResourceMixin, ResourceViewSet, integer_lookup
from scheduling.selectors.attendees import attendee_list
from scheduling.selectors.event_types import event_type_list
from scheduling.serializers.attendees import AttendeeCreateSerializer, AttendeeUpdateSerializer, V1AttendeeSerializer
from scheduling.serializers.event_types import EventTypeSerializer
from scheduling.services.attendees import attendee_create, attendee_delete, attendee_update


class AttendeeViewSet(CrudResourceViewSet):
    """The attendees of the caller's bookings; adding one follows the add-attendee rule (an
    accepted or pending booking, no address twice: 409)."""

    selector = attendee_list
    scopes = {"GET": READ_BOOKING, "POST": WRITE_BOOKING, "PATCH": WRITE_BOOKING, "DELETE": WRITE_BOOKING}
    envelope_singular = "attendee"
    envelope_plural = "attendees"
    serializer_class = V1AttendeeSerializer
    input_serializer_class = AttendeeCreateSerializer
    update_serializer_class = AttendeeUpdateSerializer
    conflict_actions = ("create", "partial_update", "destroy")

    def perform_create(self, data):
        return attendee_create(actor=self.request.user, **data)

    def perform_update(self, instance, data):
        return attendee_update(attendee=instance, **data)

    def perform_destroy(self, instance):
        attendee_delete(attendee=instance)


class TeamEventTypeViewSet(ListResourceMixin, ResourceViewSet):
    """`GET /teams/{teamId}/event-types`: the team's event types, for its members (the event type
    list's visibility); a team the caller is not in lists nothing."""

    selector = event_type_list
    scopes = {"GET": READ_EVENT_TYPE}
    envelope_singular = "event_type"
    envelope_plural = "event_types"
    serializer_class = EventTypeSerializer
    filters_by_user = False

    def get_queryset(self):
        team_id = integer_lookup(self.kwargs["team_id"])
        return event_type_list(user=self.request.user).filter(team_id=team_id)
