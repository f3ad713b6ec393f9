"""GET /v2/slots (the 2024-09-04 shape) over the slot selector."""

from datetime import datetime, timedelta

from django.utils import timezone
from rest_framework.exceptions import ValidationError

from calv2 import selectors, shapes
from calv2.views.base import V2View
from core.exceptions import NotFound
from core.limits import limit
from core.query import Boolean, Choice, Instant, Integer, ListOf, QueryParameters, Text, TimeZone
from core.scopes import (
    READ_BOOKING,
)
from scheduling.selectors.slots import available_slots, slots_with_hosts
from scheduling.services.booking_requests import event_type_named, refuse_unsupported


class SlotQuery(QueryParameters):
    """Cal.com 2024-09-04's GET /v2/slots; `start` and `end` without an offset are in `timeZone`,
    a date `end` includes that whole day."""

    event_type_id = Integer(minimum=1, description="The event type; or eventTypeSlug with username or teamSlug.")
    event_type_slug = Text(description="With username (or usernames naming one user) or teamSlug.")
    username = Text(description="With eventTypeSlug: the owner.")
    usernames = ListOf(Text(), comma_separated=True, description="One username; more is a group booking (400).")
    team_slug = Text(description="With eventTypeSlug: the team.")
    organization_slug = Text(description="Not supported: this service has no organizations (400).")
    time_zone = TimeZone(default="UTC")
    start = Instant(zone_from="time_zone", required=True)
    end = Instant(zone_from="time_zone", end=True, required=True)
    duration = Integer(minimum=1, maximum=1440)
    format = Choice(["time", "range"], default="time")
    booking_uid_to_reschedule = Text(description="A booking being moved: its own time counts as free.")
    include_hosts = Boolean(default=False, description="This service's extension: each slot lists who is free.")


def _event_type(request, query: dict):
    """The event type the query names, as a booking names it (`event_type_named`); Cal.com's
    `usernames` of one user is its `username` (several are a dynamic group, not supported here)."""
    usernames = query["usernames"]
    if len(usernames) > 1:
        raise ValidationError({"usernames": ["Group bookings of several users are not supported: send one."]})
    refuse_unsupported({"organizationSlug": query["organization_slug"]})
    return event_type_named(
        actor=request.user,
        event_type_id=query["event_type_id"],
        event_type_slug=query["event_type_slug"],
        username=query["username"] or (usernames[0] if usernames else None),
        team_slug=query["team_slug"],
    )


class SlotsView(V2View):
    scopes = {"GET": READ_BOOKING}

    def get(self, request):
        query = SlotQuery.parse(request)
        start, end, time_zone = query["start"], query["end"], query["time_zone"]
        if end <= start:
            raise ValidationError({"end": ["Must be after start."]})
        max_days = limit("SLOTS_MAX_DAYS")
        if end - start > timedelta(days=max_days):
            raise ValidationError({"end": [f"The range may span at most {max_days} days."]})
        event_type = _event_type(request, query)
        if query["duration"] is not None and query["duration"] != event_type.length:
            raise ValidationError({"duration": [f"This event type lasts {event_type.length} minutes."]})
        moving = None
        if query["booking_uid_to_reschedule"]:
            moving = selectors.booking_v2_by_uid(user=request.user, uid=query["booking_uid_to_reschedule"])
            if moving is None:
                raise NotFound(f"Booking with uid={query['booking_uid_to_reschedule']} not found.")
        grouped = (slots_with_hosts if query["include_hosts"] else available_slots)(
            event_type=event_type,
            range_start=start,
            range_end=end,
            time_zone=time_zone,
            now=timezone.now(),
            exclude_booking_id=moving.pk if moving is not None else None,
        )
        length = timedelta(minutes=event_type.length)
        data = {}
        for day, slots in grouped.items():
            items = []
            for slot in slots:
                slot_start = datetime.fromisoformat(slot["time"])
                item = {"start": shapes.local_iso_ms(slot_start, time_zone)}
                if query["format"] == "range":
                    item["end"] = shapes.local_iso_ms(slot_start + length, time_zone)
                if "hosts" in slot:
                    item["hosts"] = slot["hosts"]
                items.append(item)
            data[day] = items
        return self.success(data)
