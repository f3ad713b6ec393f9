"""/v2/teams/{teamId}/event-types: a team's event types with their hosts, in Cal.com's
`TeamEventTypeOutput_2024_06_14` shape, over the same event type services as v1."""

from rest_framework import serializers, status

from calv2 import team_inputs
from calv2.inputs import V2Input
from calv2.shapes import event_type_2024_06_14
from calv2.views import webhooks
from calv2.views.base import V2View, v2_field_names
from calv2.views.bookings import BookingMixin
from calv2.views.event_types import event_type_fields
from core.exceptions import ApplicationError, NotFound
from core.scopes import READ_EVENT_TYPE, WRITE_BOOKING, WRITE_EVENT_TYPE
from scheduling.models import Host, SchedulingType
from scheduling.selectors.event_types import event_type_list
from scheduling.services.assignment import booking_reassign
from scheduling.services.event_types import event_type_create, event_type_delete, event_type_update

RENAMES = {"length": "lengthInMinutes", "hosts": "hosts", "schedulingType": "schedulingType"}


def _hosts(event_type) -> list[dict]:
    """The event type's hosts in v2's names (`mandatory`, priority names)."""
    rows = Host.objects.filter(event_type=event_type).select_related("user").order_by("id")
    return [
        {
            "userId": row.user_id,
            "name": row.user.name or row.user.username,
            "username": row.user.username,
            "avatarUrl": row.user.avatar or None,
            "mandatory": row.is_fixed,
            "priority": team_inputs.PRIORITIES[row.priority],
            "weight": row.weight,
        }
        for row in rows
    ]


def team_event_type_2024_06_14(event_type) -> dict:
    """A team event type with `schedulingType`, `hosts` and `assignAllTeamMembers`."""
    return {
        **event_type_2024_06_14(event_type),
        "teamId": event_type.team_id,
        "schedulingType": event_type.scheduling_type or None,
        "hosts": _hosts(event_type),
        "assignAllTeamMembers": event_type.assign_all_team_members,
    }


class NotATeamEventType(ApplicationError):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY


def scheduling_config(event_type) -> dict:
    """Cal.com's scheduling configuration of a team event type (GET
    /v2/event-types/{eventTypeId}/scheduling-config): the hosts and `assignAllTeamMembers`; for a
    round-robin one also its host groups and round-robin settings, as this service applies them:
    no host groups, weights always steering assignment, a reschedule keeping its host when free,
    no lead threshold, no-show or CRM rules."""
    if event_type.team_id is None or not event_type.scheduling_type:
        raise NotATeamEventType(f"Event type {event_type.pk} is not a team event type with hosts.")
    round_robin = event_type.scheduling_type == SchedulingType.ROUND_ROBIN
    hosts = _hosts(event_type)
    config = {
        "eventTypeId": event_type.pk,
        "schedulingType": "roundRobin" if round_robin else "collective",
        "hosts": [{**host, "groupId": None} for host in hosts] if round_robin else hosts,
        "assignAllTeamMembers": event_type.assign_all_team_members,
    }
    if round_robin:
        config |= {
            "hostGroups": [],
            "rescheduleWithSameRoundRobinHost": True,
            "isRRWeightsEnabled": True,
            "maxLeadThreshold": None,
            "includeNoShowInRRCalculation": False,
            "crmRecordOwnerFallbackWindowHours": None,
        }
    return config


class EventTypeSchedulingConfigView(V2View):
    """GET /v2/event-types/{eventTypeId}/scheduling-config, as Cal.com's MCP server reads it: an
    event type the caller sees (else 404), a team one with hosts (else 422, as Cal.com)."""

    scopes = {"GET": READ_EVENT_TYPE}

    def get(self, request, event_type_id):
        event_type = event_type_list(user=request.user).filter(pk=event_type_id).first()
        if event_type is None:
            raise NotFound(f"Event type with id={event_type_id} not found.")
        return self.success(scheduling_config(event_type))


def _team_event_types(request, team_id: int):
    return event_type_list(user=request.user).filter(team_id=team_id)


class TeamEventTypesView(V2View):
    scopes = {"GET": READ_EVENT_TYPE, "POST": WRITE_EVENT_TYPE}

    def get(self, request, team_id):
        event_types = _team_event_types(request, team_id).order_by("id")
        return self.success([team_event_type_2024_06_14(event_type) for event_type in event_types])

    def post(self, request, team_id):
        data = team_inputs.host_fields(event_type_fields(self.body(team_inputs.TeamEventTypeCreateInput)))
        with v2_field_names(RENAMES):
            event_type = event_type_create(user=request.user, team_id=team_id, **data)
        event_type = event_type_list(user=request.user).get(pk=event_type.pk)
        return self.success(team_event_type_2024_06_14(event_type), status_code=status.HTTP_201_CREATED)


class TeamEventTypeView(V2View):
    scopes = {"GET": READ_EVENT_TYPE, "PATCH": WRITE_EVENT_TYPE, "DELETE": WRITE_EVENT_TYPE}

    def visible(self, team_id: int, event_type_id: int):
        event_type = _team_event_types(self.request, team_id).filter(pk=event_type_id).first()
        if event_type is None:
            raise NotFound(f"Event type with id={event_type_id} not found.")
        return event_type

    def get(self, request, team_id, event_type_id):
        return self.success(team_event_type_2024_06_14(self.visible(team_id, event_type_id)))

    def patch(self, request, team_id, event_type_id):
        event_type = self.visible(team_id, event_type_id)
        data = team_inputs.host_fields(event_type_fields(self.body(team_inputs.TeamEventTypeUpdateInput)))
        with v2_field_names(RENAMES):
            event_type = event_type_update(event_type=event_type, actor=request.user, **data)
        return self.success(team_event_type_2024_06_14(self.visible(team_id, event_type.pk)))

    def delete(self, request, team_id, event_type_id):
        event_type = self.visible(team_id, event_type_id)
        body = {"id": event_type.pk, "lengthInMinutes": event_type.length, "title": event_type.title}
        body["slug"] = event_type.slug
        event_type_delete(event_type=event_type, actor=request.user)
        return self.success(body)


class ReassignInput(V2Input):
    reason = serializers.CharField(max_length=5000, required=False, allow_blank=True)


class BookingReassignView(BookingMixin, V2View):
    """POST /v2/bookings/{uid}/reassign and …/reassign/{userId}: a round-robin booking to another
    host (`booking_reassign`), answered as Cal.com's `{bookingUid, reassignedTo: {id, name, email}}`."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid, user_id=None):
        booking = self.visible_booking(uid)
        body = self.body(ReassignInput) if request.data else {}
        booking = booking_reassign(booking=booking, actor=request.user, user_id=user_id, reason=body.get("reason", ""))
        host = booking.organizer
        return self.success(
            {"bookingUid": booking.uid, "reassignedTo": {"id": host.pk, "name": host.name, "email": host.email}}
        )


class TeamEventTypeMixin:
    """A team event type's sub-resource: the event type must be one of the team's that the caller
    sees (else 404) before the event type's own view runs."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        event_type_id, team_id = kwargs["event_type_id"], kwargs["team_id"]
        if not _team_event_types(request, team_id).filter(pk=event_type_id).exists():
            raise NotFound(f"Event type with id={event_type_id} not found.")


class TeamEventTypeWebhooksView(TeamEventTypeMixin, webhooks.WebhooksView):
    """/v2/teams/{teamId}/event-types/{eventTypeId}/webhooks: as /v2/event-types/{id}/webhooks."""


class TeamEventTypeWebhookView(TeamEventTypeMixin, webhooks.WebhookView):
    """/v2/teams/{teamId}/event-types/{eventTypeId}/webhooks/{webhookId}."""
