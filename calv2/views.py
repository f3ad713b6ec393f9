"""The v2 operations: each reads its input (query or body, Cal.com's names), calls this service's
selectors and services, and writes the answer in the shape the request's `cal-api-version`
selects (calv2.shapes). No rule of the domain is written here; an error raised by a service
becomes the v2 error envelope at the edge (calv2.wire).

    request ─▶ V2View (auth, scopes, rate limit: core's) ─▶ calv2.inputs / core.query
            ─▶ scheduling / webhooks / accounts services and selectors
            ─▶ calv2.shapes (by version) ─▶ {"status": "success", "data": …}
"""

import base64
import math
from collections.abc import Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from zoneinfo import available_timezones

import orjson
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import BaseContentNegotiation, DefaultContentNegotiation
from rest_framework.response import Response

from accounts.selectors import team_list
from accounts.services import user_update
from calv2 import inputs, selectors, shapes
from calv2.versions import (
    V2024_04_15,
    V2024_06_11,
    V2024_06_14,
    V2024_08_13,
    V2026_02_25,
    V2026_05_01,
    requested_version,
    shape_for,
)
from core.exceptions import NotFound
from core.limits import limit
from core.query import Choice, Email, Instant, Integer, ListOf, QueryParameters, Text, TimeZone
from core.scopes import (
    READ_BOOKING,
    READ_EVENT_TYPE,
    READ_MEMBERSHIP,
    READ_PROFILE,
    READ_SCHEDULE,
    READ_WEBHOOK,
    WRITE_BOOKING,
    WRITE_EVENT_TYPE,
    WRITE_SCHEDULE,
    WRITE_WEBHOOK,
)
from core.viewsets import ResourceAPIView
from scheduling.selectors.event_types import event_type_bookable, event_type_list
from scheduling.selectors.schedules import schedule_list
from scheduling.selectors.slots import available_slots
from scheduling.serializers.bookings import BookingCreateSerializer, BookingSerializer
from scheduling.services.bookings import (
    booking_cancel,
    booking_confirm,
    booking_create,
    booking_reject,
    booking_reschedule_as_new,
)
from scheduling.services.event_types import event_type_create, event_type_delete, event_type_update
from scheduling.services.schedules import schedule_create, schedule_delete, schedule_update
from webhooks.services import webhook_create, webhook_delete, webhook_update


class JSONOnly(BaseContentNegotiation):
    """v2 has one representation, JSON, and `?format=` is one of its query parameters (GET
    /v2/slots: `time` or `range`), not DRF's renderer override."""

    def select_parser(self, request, parsers):
        return DefaultContentNegotiation().select_parser(request, parsers)

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class V2View(ResourceAPIView):
    """core's authentication, per-method scopes and rate limit, plus v2's success envelope."""

    content_negotiation_class = JSONOnly
    schema = None  # described by the v2 document (calv2/openapi.py), not by v1's generated one

    @property
    def version(self) -> str:
        return requested_version(self.request)

    @staticmethod
    def success(data, *, status_code: int = status.HTTP_200_OK, **extra) -> Response:
        return Response({"status": "success", "data": data, **extra}, status=status_code)

    def body(self, input_class, **kwargs) -> dict:
        serializer = input_class(data=self.request.data, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


@contextmanager
def v2_field_names(renames: dict[str, str]):
    """A service names its fields as v1 does (`eventTriggers`); a v2 client sent them under v2's
    names (`triggers`), and the 400 says so."""
    try:
        yield
    except DjangoValidationError as error:
        if not hasattr(error, "error_dict"):
            raise
        raise DjangoValidationError(
            {renames.get(field, field): messages for field, messages in error.message_dict.items()}
        ) from None


# --- pagination -------------------------------------------------------------------------------


class SkipTake(QueryParameters):
    take = Integer(minimum=1, maximum=250, default=100, description="Page size (at most 250).")
    skip = Integer(minimum=0, maximum=10**9, default=0, description="Items to skip.")


def offset_pagination(*, total: int, take: int, skip: int, returned: int) -> dict:
    """Cal.com's `pagination` object of offset lists."""
    return {
        "totalItems": total,
        "remainingItems": max(total - skip - returned, 0),
        "returnedItems": returned,
        "itemsPerPage": take,
        "currentPage": skip // take + 1,
        "totalPages": math.ceil(total / take) if total else 0,
        "hasNextPage": skip + returned < total,
        "hasPreviousPage": skip > 0,
    }


# --- me, teams --------------------------------------------------------------------------------


class MeView(V2View):
    """The caller's profile. PATCH needs only the profile scope, as Cal.com's `PROFILE_WRITE`
    does here: the caller edits themselves."""

    scopes = {"GET": READ_PROFILE, "PATCH": READ_PROFILE}

    def get(self, request):
        return self.success(shapes.me(request.user))

    def patch(self, request):
        data = dict(self.body(inputs.MeUpdateInput))
        if "avatar_url" in data:
            data["avatar"] = data.pop("avatar_url")
        if "default_schedule_id" in data:
            schedule_id = data.pop("default_schedule_id")
            schedule = schedule_list(user=request.user).filter(pk=schedule_id, user=request.user).first()
            if schedule is None:
                raise ValidationError({"defaultScheduleId": [f"Schedule {schedule_id} is not one of yours."]})
            data["default_schedule"] = schedule
        with v2_field_names({"avatar": "avatarUrl", "default_schedule": "defaultScheduleId"}):
            user = user_update(user=request.user, **data)
        return self.success(shapes.me(user))


class TeamsView(V2View):
    scopes = {"GET": READ_MEMBERSHIP}

    def get(self, request):
        return self.success([shapes.team(team) for team in team_list(user=request.user)])


class TimeZonesView(V2View):
    """Cal.com answers its city list (`{city, timezone, pop}`); this service has no city data and
    answers one entry per IANA zone, named after the zone's last part, with `pop` 0."""

    scopes = {"GET": READ_PROFILE}

    def get(self, request):
        return self.success(
            [
                {"city": name.rsplit("/", 1)[-1].replace("_", " "), "timezone": name, "pop": 0}
                for name in sorted(available_timezones())
                if "/" in name and not name.startswith(("Etc/", "SystemV/", "posix/", "right/"))
            ]
        )


# --- webhooks ---------------------------------------------------------------------------------


class WebhookPages(QueryParameters):
    take = Integer(minimum=1, maximum=250, default=250, description="Page size (at most 250).")
    skip = Integer(minimum=0, maximum=10**9, default=0, description="Webhooks to skip.")


class WebhookOwnerMixin:
    """`/v2/webhooks` are the caller's own; `/v2/event-types/{eventTypeId}/webhooks` an event
    type's, which the caller must see (else 404) and manage (the service's rule: else 403)."""

    scopes = {"GET": READ_WEBHOOK, "POST": WRITE_WEBHOOK, "PATCH": WRITE_WEBHOOK, "DELETE": WRITE_WEBHOOK}

    @property
    def event_type_id(self) -> int | None:
        value = self.kwargs.get("event_type_id")
        return int(value) if value is not None else None

    def owned_webhooks(self):
        user = self.request.user
        if self.event_type_id is None:
            return selectors.webhooks_of_user(user=user)
        if not event_type_list(user=user).filter(pk=self.event_type_id).exists():
            raise NotFound(f"Event type with id={self.event_type_id} not found.")
        return selectors.webhooks_of_event_type(user=user, event_type_id=self.event_type_id)

    def owned_webhook(self, webhook_id):
        webhook = self.owned_webhooks().filter(pk=webhook_id).first()
        if webhook is None:
            raise NotFound(f"Webhook with id={webhook_id} not found.")
        return webhook


class WebhooksView(WebhookOwnerMixin, V2View):
    def get(self, request, **kwargs):
        page = WebhookPages.parse(request)
        webhooks = self.owned_webhooks()[page["skip"] : page["skip"] + page["take"]]
        return self.success([shapes.webhook(webhook) for webhook in webhooks])

    def post(self, request, **kwargs):
        self.owned_webhooks()  # the event type's 404 before the body's 400
        data = self.body(inputs.WebhookCreateInput)
        with v2_field_names({"eventTriggers": "triggers"}):
            webhook = webhook_create(
                actor=request.user,
                subscriber_url=data["subscriber_url"],
                event_triggers=data["triggers"],
                payload_template=data.get("payload_template"),
                active=data["active"],
                secret=data.get("secret"),
                event_type_id=self.event_type_id,
            )
        return self.success(shapes.webhook(webhook), status_code=status.HTTP_201_CREATED)


class WebhookView(WebhookOwnerMixin, V2View):
    def get(self, request, webhook_id, **kwargs):
        return self.success(shapes.webhook(self.owned_webhook(webhook_id)))

    def patch(self, request, webhook_id, **kwargs):
        webhook = self.owned_webhook(webhook_id)
        data = self.body(inputs.WebhookUpdateInput)
        names = {
            "subscriber_url": "subscriber_url",
            "triggers": "event_triggers",
            "payload_template": "payload_template",
        }
        names |= {"active": "active", "secret": "secret"}
        changes = {service_name: data[name] for name, service_name in names.items() if name in data}
        with v2_field_names({"eventTriggers": "triggers"}):
            webhook = webhook_update(webhook=webhook, **changes)
        return self.success(shapes.webhook(webhook))

    def delete(self, request, webhook_id, **kwargs):
        webhook = self.owned_webhook(webhook_id)
        body = shapes.webhook(webhook)
        webhook_delete(webhook=webhook)
        return self.success(body)


# --- event types ------------------------------------------------------------------------------

EVENT_TYPE_SHAPES = {V2024_04_15: (V2024_04_15, V2024_06_11)}


class EventTypesView(V2View):
    scopes = {"GET": READ_EVENT_TYPE, "POST": WRITE_EVENT_TYPE}

    def post(self, request):
        data = _event_type_fields(self.body(inputs.EventTypeCreateInput))
        with v2_field_names({"length": "lengthInMinutes"}):
            event_type = event_type_create(user=request.user, **data)
        event_type = event_type_list(user=request.user).get(pk=event_type.pk)
        return self.success(shapes.event_type_2024_06_14(event_type), status_code=status.HTTP_201_CREATED)

    def get(self, request):
        event_types = list(event_type_list(user=request.user).order_by("id"))
        if shape_for(self.version, EVENT_TYPE_SHAPES, V2024_06_14) == V2024_04_15:
            return self.success(shapes.event_type_groups_2024_04_15(request.user, event_types))
        return self.success([shapes.event_type_2024_06_14(event_type) for event_type in event_types])


def _event_type_fields(data) -> dict:
    """v2's names → the event type service's (`lengthInMinutes` is the model's `length`)."""
    return {("length" if name == "length_in_minutes" else name): value for name, value in data.items()}


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
        data = _event_type_fields(self.body(inputs.EventTypeUpdateInput))
        with v2_field_names({"length": "lengthInMinutes"}):
            event_type = event_type_update(event_type=event_type, actor=request.user, **data)
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


# --- schedules --------------------------------------------------------------------------------


def _availability_rows(weekly, overrides) -> list[dict]:
    """v2's `availability` (days by name) and `overrides` (by date) as the schedule service's rows."""
    rows = [
        {
            "days": [inputs.WEEKDAY_NAMES.index(day) for day in item["days"]],
            "start_time": item["start_time"],
            "end_time": item["end_time"],
        }
        for item in weekly
    ]
    rows += [
        {"date": item["date"], "start_time": item["start_time"], "end_time": item["end_time"]} for item in overrides
    ]
    return rows


def _stored_rows(schedule) -> tuple[list[dict], list[dict]]:
    weekly, overrides = [], []
    for row in schedule.availability.all():
        if row.date is None:
            weekly.append(
                {
                    "days": [inputs.WEEKDAY_NAMES[day] for day in row.days],
                    "start_time": row.start_time,
                    "end_time": row.end_time,
                }
            )
        else:
            overrides.append({"date": row.date, "start_time": row.start_time, "end_time": row.end_time})
    return weekly, overrides


class ScheduleMixin:
    scopes = {"GET": READ_SCHEDULE, "POST": WRITE_SCHEDULE, "PATCH": WRITE_SCHEDULE, "DELETE": WRITE_SCHEDULE}

    def own_schedules(self):
        return schedule_list(user=self.request.user).filter(user=self.request.user)

    def shape(self, schedule) -> dict:
        self.request.user.refresh_from_db(fields=["default_schedule"])
        return shapes.schedule_2024_06_11(schedule, default_schedule_id=self.request.user.default_schedule_id)


class SchedulesView(ScheduleMixin, V2View):
    def get(self, request):
        default = request.user.default_schedule_id
        return self.success([shapes.schedule_2024_06_11(s, default_schedule_id=default) for s in self.own_schedules()])

    def post(self, request):
        data = self.body(inputs.ScheduleCreateInput)
        availability = None
        if "availability" in data or "overrides" in data:
            availability = _availability_rows(data.get("availability", []), data.get("overrides", []))
        schedule = schedule_create(
            actor=request.user,
            name=data["name"],
            time_zone=data["time_zone"],
            availability=availability,
            is_default=data["is_default"],
        )
        return self.success(self.shape(self.own_schedules().get(pk=schedule.pk)), status_code=status.HTTP_201_CREATED)


class DefaultScheduleView(ScheduleMixin, V2View):
    def get(self, request):
        schedule = self.own_schedules().filter(pk=request.user.default_schedule_id).first()
        return self.success(self.shape(schedule) if schedule is not None else None)


class ScheduleView(ScheduleMixin, V2View):
    def owned(self, schedule_id: int):
        schedule = self.own_schedules().filter(pk=schedule_id).first()
        if schedule is None:
            raise NotFound(f"Schedule with id={schedule_id} not found.")
        return schedule

    def get(self, request, schedule_id):
        return self.success(self.shape(self.owned(schedule_id)))

    def patch(self, request, schedule_id):
        schedule = self.owned(schedule_id)
        data = self.body(inputs.ScheduleUpdateInput)
        availability = None
        if "availability" in data or "overrides" in data:
            # Cal.com replaces what was sent: the weekly rules, the overrides, or both.
            weekly, overrides = _stored_rows(schedule)
            availability = _availability_rows(data.get("availability", weekly), data.get("overrides", overrides))
        schedule_update(
            schedule=schedule,
            name=data.get("name"),
            time_zone=data.get("time_zone"),
            availability=availability,
            is_default=data.get("is_default"),
        )
        return self.success(self.shape(self.owned(schedule_id)))

    def delete(self, request, schedule_id):
        schedule_delete(schedule=self.owned(schedule_id))
        return Response({"status": "success"})


# --- bookings ---------------------------------------------------------------------------------

# Which versions each booking shape serves (docs/migrating-from-cal-v2.md, "Versions").
BOOKING_SHAPES = {V2024_08_13: (V2024_08_13, V2026_02_25), V2026_05_01: (V2026_05_01,)}

V2_STATUSES = ["upcoming", "recurring", "past", "cancelled", "unconfirmed"]
SORT = {"asc": "", "desc": "-"}


class BookingFilters(QueryParameters):
    """Cal.com 2024-08-13's filters of GET /v2/bookings; all that are sent apply together."""

    status = ListOf(Choice(V2_STATUSES), comma_separated=True, description="Any of these (comma-separated).")
    attendee_email = Email()
    attendee_name = Text()
    event_type_id = Integer(minimum=1)
    event_type_ids = ListOf(Integer(minimum=1), comma_separated=True)
    team_id = Integer(minimum=1)
    teams_ids = ListOf(Integer(minimum=1), comma_separated=True)
    after_start = Instant()
    before_end = Instant(end=True)
    after_created_at = Instant()
    before_created_at = Instant(end=True)
    after_updated_at = Instant()
    before_updated_at = Instant(end=True)
    sort_start = Choice(list(SORT))
    sort_end = Choice(list(SORT))
    sort_created = Choice(list(SORT))


class BookingCursor(QueryParameters):
    """2026-05-01's cursor mode: one `status`, `limit` and the `cursor` of the previous page."""

    status = Choice(V2_STATUSES)
    limit = Integer(minimum=1, maximum=250, default=100, description="Page size (at most 250).")
    cursor = Text(description="`pagination.nextCursor` of the previous page.")


def _order(filters: dict) -> tuple[str, ...]:
    for name, column in (("sort_start", "start_time"), ("sort_end", "end_time"), ("sort_created", "created_at")):
        if filters[name] is not None:
            return (f"{SORT[filters[name]]}{column}", f"{SORT[filters[name]]}id")
    return ("start_time", "id")


def _selection(request, filters: dict, *, statuses: list[str], order_by: tuple[str, ...]):
    event_type_ids = [*filters["event_type_ids"], *([filters["event_type_id"]] if filters["event_type_id"] else [])]
    team_ids = [*filters["teams_ids"], *([filters["team_id"]] if filters["team_id"] else [])]
    return selectors.bookings_v2(
        user=request.user,
        now=timezone.now(),
        statuses=statuses,
        attendee_email=filters["attendee_email"],
        attendee_name=filters["attendee_name"],
        event_type_ids=event_type_ids,
        team_ids=team_ids,
        after_start=filters["after_start"],
        before_end=filters["before_end"],
        after_created_at=filters["after_created_at"],
        before_created_at=filters["before_created_at"],
        after_updated_at=filters["after_updated_at"],
        before_updated_at=filters["before_updated_at"],
        order_by=order_by,
    )


def _encode_cursor(booking) -> str:
    raw = orjson.dumps([booking.start_time.isoformat(), booking.pk])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        start, pk = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return datetime.fromisoformat(start), int(pk)
    except (ValueError, TypeError, orjson.JSONDecodeError):
        raise ValidationError({"cursor": ["Not a cursor this API gave (pagination.nextCursor)."]}) from None


class LegacyBookingPage(QueryParameters):
    """2024-04-15's list: `status` of the v2 statuses, `limit`, and `cursor`, the offset of the page
    (`nextCursor` of the previous answer)."""

    status = ListOf(Choice(V2_STATUSES), comma_separated=True)
    limit = Integer(minimum=1, maximum=250, default=100)
    cursor = Integer(minimum=0, maximum=10**9, default=0)


def legacy_booking(booking) -> dict:
    """2024-04-15's booking: the stored booking under its database names, as v1 shows it."""
    return BookingSerializer(booking).data


class BookingsView(V2View):
    """GET and POST /v2/bookings. The shape by version: 2024-08-13 and 2026-02-25 get Cal.com's
    current booking with offset `pagination`; 2026-05-01 the same booking with a cursor; every
    other value (and none) Cal.com's default, 2024-04-15, whose body and booking are v1's."""

    scopes = {"GET": READ_BOOKING, "POST": WRITE_BOOKING}

    @property
    def shape(self) -> str:
        return shape_for(self.version, BOOKING_SHAPES, V2024_04_15)

    def get(self, request):
        if self.shape == V2026_05_01:
            return self._cursor_page(request)
        if self.shape == V2024_04_15:
            return self._legacy_page(request)
        filters = BookingFilters.parse(request)
        page = SkipTake.parse(request)
        queryset = _selection(request, filters, statuses=filters["status"], order_by=_order(filters))
        total = queryset.count()
        bookings = list(queryset[page["skip"] : page["skip"] + page["take"]]) if total else []
        pagination = offset_pagination(total=total, take=page["take"], skip=page["skip"], returned=len(bookings))
        return self.success([shapes.booking_2024_08_13(booking) for booking in bookings], pagination=pagination)

    def _cursor_page(self, request):
        filters = BookingFilters.parse(request) | BookingCursor.parse(request)
        statuses = [filters["status"]] if filters["status"] else []
        queryset = _selection(request, filters, statuses=statuses, order_by=("start_time", "id"))
        if filters["cursor"]:
            start, pk = _decode_cursor(filters["cursor"])
            queryset = queryset.filter(start_time__gte=start).exclude(start_time=start, id__lte=pk)
        rows = list(queryset[: filters["limit"] + 1])
        has_more = len(rows) > filters["limit"]
        rows = rows[: filters["limit"]]
        pagination = {"nextCursor": _encode_cursor(rows[-1]) if has_more else None, "hasMore": has_more}
        return self.success([shapes.booking_2024_08_13(booking) for booking in rows], pagination=pagination)

    def _legacy_page(self, request):
        query = LegacyBookingPage.parse(request)
        queryset = selectors.bookings_v2(user=request.user, now=timezone.now(), statuses=query["status"])
        rows = list(queryset[query["cursor"] : query["cursor"] + query["limit"] + 1])
        more = len(rows) > query["limit"]
        rows = rows[: query["limit"]]
        next_cursor = query["cursor"] + len(rows) if more else None
        data = {
            "bookings": [legacy_booking(booking) for booking in rows],
            "recurringInfo": [],
            "nextCursor": next_cursor,
        }
        return self.success(data)

    def post(self, request):
        if self.shape == V2024_04_15:
            return self._legacy_create(request)
        data = self.body(inputs.BookingCreateInput)
        event_type = event_type_bookable(user=request.user, event_type_id=data["event_type_id"])
        if event_type is None:
            raise NotFound(f"Event type with id={data['event_type_id']} not found.")
        length = data.get("length_in_minutes")
        if length is not None and length != event_type.length:
            raise ValidationError({"lengthInMinutes": [f"This event type lasts {event_type.length} minutes."]})
        attendee = data["attendee"]
        guests = data.get("guests", [])
        responses = {**data.get("booking_fields_responses", {}), "name": attendee["name"], "email": attendee["email"]}
        if guests:
            responses["guests"] = guests
        booking = booking_create(
            event_type=event_type,
            start=data["start"],
            attendee_name=attendee["name"],
            attendee_email=attendee["email"],
            attendee_time_zone=attendee["time_zone"],
            locale=attendee.get("language", "en"),
            guests=guests,
            location=data.get("location", ""),
            metadata=data.get("metadata"),
            responses=responses,
            sms_reminder_number=attendee.get("phone_number", ""),
        )
        booking = selectors.booking_v2_by_uid(user=request.user, uid=booking.uid)
        return self.success(shapes.booking_2024_08_13(booking), status_code=status.HTTP_201_CREATED)

    def _legacy_create(self, request):
        """2024-04-15's body is v1's (`start`, `eventTypeId`, `responses`, `timeZone`, …); fields
        v1 did not know are dropped here, as Cal.com's validation drops them."""
        body = request.data
        if isinstance(body, Mapping):
            known = set(BookingCreateSerializer().fields)
            body = {key: value for key, value in body.items() if key in known}
        serializer = BookingCreateSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        event_type_id = data.pop("event_type_id")
        reschedule_uid = data.pop("reschedule_uid", None)
        reschedule = None
        if reschedule_uid is not None:
            reschedule = selectors.booking_v2_by_uid(user=request.user, uid=reschedule_uid)
            if reschedule is None:
                raise NotFound(f"Booking with uid={reschedule_uid} not found.")
        event_type = event_type_bookable(user=request.user, event_type_id=event_type_id)
        if event_type is None:
            raise NotFound(f"Event type with id={event_type_id} not found.")
        booking = booking_create(
            event_type=event_type,
            attendee_name=data.pop("name"),
            attendee_email=data.pop("email"),
            attendee_time_zone=data.pop("time_zone"),
            reschedule=reschedule,
            **data,
        )
        booking = selectors.booking_v2_by_uid(user=request.user, uid=booking.uid)
        return self.success(legacy_booking(booking), status_code=status.HTTP_201_CREATED)


class BookingMixin:
    def visible_booking(self, uid: str):
        booking = selectors.booking_v2_by_uid(user=self.request.user, uid=uid)
        if booking is None:
            raise NotFound(f"Booking with uid={uid} not found.")
        return booking


class BookingView(BookingMixin, V2View):
    scopes = {"GET": READ_BOOKING}

    def get(self, request, uid):
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))


class BookingCancelView(BookingMixin, V2View):
    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(inputs.BookingCancelInput)
        booking_cancel(
            booking=booking, cancellation_reason=data.get("cancellation_reason", ""), cancelled_by=request.user.email
        )
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))


class BookingRescheduleView(BookingMixin, V2View):
    """Cal.com's reschedule: a new booking (new uid) at `start`; the old one is cancelled with
    `rescheduled: true` (`scheduling.services.bookings.booking_reschedule_as_new`). 201."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(inputs.BookingRescheduleInput)
        moved = booking_reschedule_as_new(
            booking=booking, start=data["start"], reschedule_reason=data.get("rescheduling_reason", "")
        )
        return self.success(shapes.booking_2024_08_13(self.visible_booking(moved.uid)), status_code=201)


class BookingConfirmView(BookingMixin, V2View):
    """A pending booking accepted by its organizer (BOOKING_CREATED is sent)."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking_confirm(booking=self.visible_booking(uid))
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))


class BookingDeclineView(BookingMixin, V2View):
    """A pending booking rejected by its organizer (BOOKING_REJECTED is sent). `reason` is read
    (and validated) but not kept: this service's bookings have no rejection reason."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        self.body(inputs.BookingDeclineInput)
        booking_reject(booking=booking)
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))


# --- slots ------------------------------------------------------------------------------------


class SlotQuery(QueryParameters):
    """Cal.com 2024-09-04's GET /v2/slots; `start` and `end` without an offset are in `timeZone`,
    a date `end` includes that whole day."""

    event_type_id = Integer(minimum=1, required=True)
    time_zone = TimeZone(default="UTC")
    start = Instant(zone_from="time_zone", required=True)
    end = Instant(zone_from="time_zone", end=True, required=True)
    duration = Integer(minimum=1, maximum=1440)
    format = Choice(["time", "range"], default="time")


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
        event_type = event_type_bookable(user=request.user, event_type_id=query["event_type_id"])
        if event_type is None:
            raise NotFound(f"Event type with id={query['event_type_id']} not found.")
        if query["duration"] is not None and query["duration"] != event_type.length:
            raise ValidationError({"duration": [f"This event type lasts {event_type.length} minutes."]})
        grouped = available_slots(
            event_type=event_type, range_start=start, range_end=end, time_zone=time_zone, now=timezone.now()
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
                items.append(item)
            data[day] = items
        return self.success(data)
