"""Cal.com API v1's connected-calendar resources on the one resource base (core.viewsets):
/v1/connected-calendars (read), /v1/selected-calendars, /v1/destination-calendars and
/v1/booking-references (create, read, update where it means something, delete)."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from calendars.models import APP_SLUGS, APP_TITLES
from calendars.selectors import (
    booking_reference_list,
    calendar_by_external_id,
    destination_calendar_list,
    is_healthy,
    selected_calendar_list,
    visible_connections,
)
from calendars.serializers import (
    BookingReferenceInputSerializer,
    BookingReferenceSerializer,
    BookingReferenceUpdateSerializer,
    ConnectedCalendarSerializer,
    DestinationCalendarInputSerializer,
    DestinationCalendarSerializer,
    SelectedCalendarInputSerializer,
    SelectedCalendarSerializer,
)
from calendars.services import (
    booking_reference_create,
    booking_reference_delete,
    booking_reference_update,
    calendar_select,
    destination_delete,
    destination_set,
)
from core.exceptions import NotFound
from core.scopes import READ_BOOKING, READ_CALENDAR, WRITE_BOOKING, WRITE_CALENDAR
from core.viewsets import (
    CreateResourceMixin,
    CrudResourceViewSet,
    DestroyResourceMixin,
    ListResourceMixin,
    ResourceViewSet,
    RetrieveResourceMixin,
)

CALENDAR_SCOPES = {"GET": READ_CALENDAR, "POST": WRITE_CALENDAR, "PATCH": WRITE_CALENDAR, "DELETE": WRITE_CALENDAR}


def _own_calendar(user, data: dict):
    calendar = calendar_by_external_id(
        user, integration=data["integration"], external_id=data["external_id"], credential_id=data.get("credential_id")
    )
    if calendar is None:
        raise NotFound(f"Calendar {data['external_id']} of {data['integration']} not found.")
    return calendar


class ConnectedCalendarViewSet(ResourceViewSet):
    """GET /v1/connected-calendars: Cal.com v1 answers a bare array of the caller's connections."""

    scopes = {"GET": READ_CALENDAR}
    pagination_class = None
    filters_by_user = False
    selector = staticmethod(lambda *, user, **_: visible_connections(user))

    @extend_schema(responses=ConnectedCalendarSerializer(many=True))
    def list(self, request, *args, **kwargs):
        answer = []
        for connection in visible_connections(request.user):
            calendars = list(connection.calendars.all())
            answer.append(
                {
                    "name": APP_TITLES[connection.kind],
                    "appId": APP_SLUGS[connection.kind],
                    "userId": connection.user_id,
                    "integration": connection.integration,
                    "credentialId": connection.pk,
                    "healthy": is_healthy(connection),
                    "calendars": [
                        {
                            "externalId": calendar.external_id,
                            "name": calendar.name,
                            "primary": index == 0,
                            "readOnly": calendar.read_only,
                            "isSelected": calendar.is_selected,
                        }
                        for index, calendar in enumerate(calendars)
                    ],
                }
            )
        return Response(answer)


class SelectedCalendarViewSet(
    ListResourceMixin, RetrieveResourceMixin, CreateResourceMixin, DestroyResourceMixin, ResourceViewSet
):
    """Creating selects a calendar (its busy time blocks slots), deleting unselects it."""

    scopes = CALENDAR_SCOPES
    selector = selected_calendar_list
    envelope_singular = "selected_calendar"
    envelope_plural = "selected_calendars"
    resource_label = "Selected Calendar"
    serializer_class = SelectedCalendarSerializer
    input_serializer_class = SelectedCalendarInputSerializer

    def perform_create(self, data):
        return calendar_select(calendar=_own_calendar(self.request.user, data), selected=True)

    def perform_destroy(self, instance):
        calendar_select(calendar=instance, selected=False)


class DestinationCalendarViewSet(CrudResourceViewSet):
    scopes = CALENDAR_SCOPES
    selector = destination_calendar_list
    envelope_singular = "destination_calendar"
    envelope_plural = "destination_calendars"
    resource_label = "Destination Calendar"
    serializer_class = DestinationCalendarSerializer
    input_serializer_class = DestinationCalendarInputSerializer
    update_serializer_class = DestinationCalendarInputSerializer

    def perform_create(self, data):
        return destination_set(user=self.request.user, calendar=_own_calendar(self.request.user, data))

    def perform_update(self, instance, data):
        return destination_set(user=instance.user, calendar=_own_calendar(instance.user, data))

    def perform_destroy(self, instance):
        destination_delete(destination=instance)


class BookingReferenceViewSet(CrudResourceViewSet):
    scopes = {"GET": READ_BOOKING, "POST": WRITE_BOOKING, "PATCH": WRITE_BOOKING, "DELETE": WRITE_BOOKING}
    selector = booking_reference_list
    envelope_singular = "booking_reference"
    envelope_plural = "booking_references"
    resource_label = "Booking reference"
    serializer_class = BookingReferenceSerializer
    input_serializer_class = BookingReferenceInputSerializer
    update_serializer_class = BookingReferenceUpdateSerializer

    def perform_create(self, data):
        return booking_reference_create(actor=self.request.user, **data)

    def perform_update(self, instance, data):
        return booking_reference_update(reference=instance, **data)

    def perform_destroy(self, instance):
        booking_reference_delete(reference=instance)
