"""/v2/event-types and /v2/event-types/{id} over the event type services."""

from django.db import transaction
from rest_framework import status
from rest_framework.exceptions import ValidationError

from calv2 import inputs, shapes
from calv2.versions import (
    V2024_04_15,
    V2024_06_11,
    V2024_06_14,
    shape_for,
)
from calv2.views.base import V2View, v2_field_names
from core.exceptions import NotFound
from core.query import QueryParameters, Text
from core.scopes import (
    READ_EVENT_TYPE,
    WRITE_EVENT_TYPE,
)
from notifications.services import event_type_mail_settings_set
from scheduling.selectors.event_types import event_type_list, event_types_of_username
from scheduling.services.event_types import event_type_create, event_type_delete, event_type_update

EVENT_TYPE_SHAPES = {V2024_04_15: (V2024_04_15, V2024_06_11)}


class EventTypeFilters(QueryParameters):
    """Cal.com 2024-06-14's: another user's event types by `username` (what their booking page
    offers), one of them by `eventSlug` as well."""

    username = Text(description="The owner's username: their event types the caller may book.")
    event_slug = Text(description="With username: the one event type with this slug.")


class EventTypesView(V2View):
    scopes = {"GET": READ_EVENT_TYPE, "POST": WRITE_EVENT_TYPE}

    def post(self, request):
        data = event_type_fields(self.body(inputs.EventTypeCreateInput))
        mail = _mail_fields(data)
        with transaction.atomic(), v2_field_names(V2_FIELD_NAMES):
            event_type = event_type_create(user=request.user, **data)
            _set_mail(event_type, mail)
        event_type = event_type_list(user=request.user).get(pk=event_type.pk)
        return self.success(shapes.event_type_2024_06_14(event_type), status_code=status.HTTP_201_CREATED)

    def get(self, request):
        if shape_for(self.version, EVENT_TYPE_SHAPES, V2024_06_14) == V2024_04_15:
            event_types = list(event_type_list(user=request.user).order_by("id"))
            return self.success(shapes.event_type_groups_2024_04_15(request.user, event_types))
        filters = EventTypeFilters.parse(request)
        if filters["username"]:
            selection = event_types_of_username(
                user=request.user, username=filters["username"], slug=filters["event_slug"]
            )
        elif filters["event_slug"]:
            raise ValidationError({"eventSlug": ["Send it with username."]})
        else:
            selection = event_type_list(user=request.user)
        selection = selection.select_related("notification_settings").order_by("id")
        return self.success([shapes.event_type_2024_06_14(event_type) for event_type in selection])


def _mail_fields(data: dict) -> dict:
    """`emailSettings` and `reminders`, taken out of the event type's own fields."""
    return {name: data.pop(name) for name in ("email_settings", "reminders") if name in data}


def _set_mail(event_type, mail: dict) -> None:
    if mail:
        switches = mail.get("email_settings", {})
        event_type_mail_settings_set(
            event_type=event_type,
            disable_emails_to_attendees=switches.get("disable_emails_to_attendees"),
            disable_emails_to_hosts=switches.get("disable_emails_to_hosts"),
            reminders=mail.get("reminders"),
        )


def event_type_fields(data) -> dict:
    """v2's names → the event type service's (`lengthInMinutes` is the model's `length`,
    `recurrence` its `recurring_event`)."""
    return {V2_NAMES.get(name, name): value for name, value in data.items()}


V2_NAMES = {
    "length_in_minutes": "length",
    "recurrence": "recurring_event",
    "booking_limits_count": "booking_limits",
    "booking_limits_duration": "duration_limits",
}
# The event type service names its fields as v1 does; a v2 client sent v2's.
V2_FIELD_NAMES = {
    "length": "lengthInMinutes",
    "recurringEvent": "recurrence",
    "bookingLimits": "bookingLimitsCount",
    "durationLimits": "bookingLimitsDuration",
}


class EventTypeView(V2View):
    """One event type in the 2024-06-14 shape; the writes go through the event type services,
    which keep v1's rules (slug unique per owner, who may manage a team's)."""

    scopes = {"GET": READ_EVENT_TYPE, "PATCH": WRITE_EVENT_TYPE, "DELETE": WRITE_EVENT_TYPE}

    def visible(self, event_type_id: int):
        event_type = event_type_list(user=self.request.user).filter(pk=event_type_id).first()
        if event_type is None:
            raise NotFound(f"Event type with id={event_type_id} not found.")
        return event_type

    def get(self, request, event_type_id):
        return self.success(shapes.event_type_2024_06_14(self.visible(event_type_id)))

    def patch(self, request, event_type_id):
        event_type = self.visible(event_type_id)
        data = event_type_fields(self.body(inputs.EventTypeUpdateInput))
        mail = _mail_fields(data)
        with transaction.atomic(), v2_field_names(V2_FIELD_NAMES):
            event_type = event_type_update(event_type=event_type, actor=request.user, **data)
            _set_mail(event_type, mail)
        return self.success(shapes.event_type_2024_06_14(self.visible(event_type.pk)))

    def delete(self, request, event_type_id):
        event_type = self.visible(event_type_id)
        body = {
            "id": event_type.pk,
            "lengthInMinutes": event_type.length,
            "title": event_type.title,
            "slug": event_type.slug,
        }
        event_type_delete(event_type=event_type, actor=request.user)
        return self.success(body)
