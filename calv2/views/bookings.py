"""/v2/bookings and the actions on one booking, over the booking services."""

import base64
from collections.abc import Mapping
from datetime import datetime

import orjson
from django.utils import timezone
from rest_framework import status
from rest_framework.exceptions import ValidationError

from calv2 import inputs, selectors, shapes
from calv2.versions import (
    V2024_04_15,
    V2024_08_13,
    V2026_02_25,
    V2026_05_01,
    shape_for,
)
from calv2.views.base import SkipTake, V2View, offset_pagination, v2_field_names
from core.exceptions import NotFound
from core.pagination import page_total
from core.query import Choice, Email, Instant, Integer, ListOf, QueryParameters, Text
from core.scopes import (
    READ_BOOKING,
    WRITE_BOOKING,
)
from notifications.switches import for_request as mail_switches_for
from scheduling.serializers.bookings import BookingCreateSerializer, BookingSerializer, booking_request_from_v1
from scheduling.services.booking_requests import BookingRequest, CancelRequest, RescheduleRequest, booking_request
from scheduling.services.bookings import (
    booking_attendee_add,
    booking_confirm,
    booking_mark_absent,
    booking_reject,
)

# Which versions each booking shape serves (docs/migrating-from-cal.md, "Versions").
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


def booking_order(filters: dict) -> tuple[str, ...]:
    for name, column in (("sort_start", "start_time"), ("sort_end", "end_time"), ("sort_created", "created_at")):
        if filters[name] is not None:
            return (f"{SORT[filters[name]]}{column}", f"{SORT[filters[name]]}id")
    return ("start_time", "id")


def booking_selection(request, filters: dict, *, statuses: list[str], order_by: tuple[str, ...]):
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
    """What `_encode_cursor` wrote, or a 400: a start with its offset and a positive integer id."""
    try:
        start, pk = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        start = datetime.fromisoformat(start)
        if start.utcoffset() is None or type(pk) is not int or not 0 < pk < 2**63:
            raise ValueError(cursor)
        return start, pk
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
        queryset = booking_selection(request, filters, statuses=filters["status"], order_by=booking_order(filters))
        bookings = list(queryset[page["skip"] : page["skip"] + page["take"] + 1])
        more, bookings = len(bookings) > page["take"], bookings[: page["take"]]
        total, exact = page_total(queryset, offset=page["skip"], rows=len(bookings), more=more)
        pagination = offset_pagination(
            total=total, take=page["take"], skip=page["skip"], returned=len(bookings), exact=exact, more=more
        )
        return self.success([shapes.booking_2024_08_13(booking) for booking in bookings], pagination=pagination)

    def _cursor_page(self, request):
        filters = BookingFilters.parse(request) | BookingCursor.parse(request)
        statuses = [filters["status"]] if filters["status"] else []
        queryset = booking_selection(request, filters, statuses=statuses, order_by=("start_time", "id"))
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
        with mail_switches_for(request):  # noEmail of a v1-shaped body, and the credential's mail bound
            return self._create(request)

    def _create(self, request):
        if self.shape == V2024_04_15:
            return self._legacy_create(request)
        data = self.body(inputs.BookingCreateInput)
        attendee = data["attendee"]
        guests = data.get("guests", [])
        responses = {**data.get("booking_fields_responses", {}), "name": attendee["name"], "email": attendee["email"]}
        if guests:
            responses["guests"] = guests
        booked = BookingRequest(
            actor=request.user,
            start=data["start"],
            event_type_id=data.get("event_type_id"),
            event_type_slug=data.get("event_type_slug"),
            username=data.get("username"),
            team_slug=data.get("team_slug"),
            length_in_minutes=data.get("length_in_minutes"),
            attendee_name=attendee["name"],
            attendee_email=attendee["email"],
            attendee_time_zone=attendee["time_zone"],
            locale=attendee.get("language", "en"),
            guests=guests,
            location=data.get("location") or data.get("meeting_url", ""),
            metadata=data.get("metadata"),
            responses=responses,
            sms_reminder_number=attendee.get("phone_number", ""),
            recurring_count=data.get("recurrence_count"),
            reservation_uid=data.get("reservation_uid"),
            whole_series_by_default=True,
        )
        with v2_field_names({"recurringCount": "recurrenceCount"}):
            result = booking_request(booked)
        # Answered as written (v1 does the same): a team member who books a colleague's time may
        # not see the booking afterwards (scheduling.selectors.bookings.booking_list).
        if result.series:
            # Cal.com answers a recurring event type's booking with every occurrence booked.
            return self.success([shapes.booking_2024_08_13(booking) for booking in result.bookings], status_code=201)
        return self.success(shapes.booking_2024_08_13(result.booking), status_code=status.HTTP_201_CREATED)

    def _legacy_create(self, request):
        """2024-04-15's body is v1's (`start`, `eventTypeId`, `responses`, `timeZone`, …) and means
        what it means to v1; fields v1 did not know are dropped here, as Cal.com's validation drops
        them. The answer is the booking (the first occurrence of a series), as v1 shows it."""
        body = request.data
        if isinstance(body, Mapping):
            known = set(BookingCreateSerializer().fields)
            body = {key: value for key, value in body.items() if key in known}
        serializer = BookingCreateSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        result = booking_request(booking_request_from_v1(serializer.validated_data, actor=request.user))
        return self.success(legacy_booking(result.booking), status_code=status.HTTP_201_CREATED)


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
    """`cancelSubsequentBookings` also cancels the later occurrences of the booking's recurring
    series and answers every occurrence of it, as Cal.com does (a booking of no series answers
    itself: Cal.com cancels it and then answers a 400)."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(inputs.BookingCancelInput)
        subsequent = data.get("cancel_subsequent_bookings", False)
        cancel = CancelRequest(
            booking=booking,
            cancelled_by=request.user.email,
            cancellation_reason=data.get("cancellation_reason", ""),
            subsequent=subsequent,
        )
        booking_request(cancel)
        if not subsequent or not booking.recurring_event_id:
            return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))
        series = selectors.bookings_v2(user=request.user).filter(recurring_event_id=booking.recurring_event_id)
        return self.success([shapes.booking_2024_08_13(occurrence) for occurrence in series])


class BookingRescheduleView(BookingMixin, V2View):
    """Cal.com's reschedule: a new booking (new uid) at `start`; the old one is cancelled with
    `rescheduled: true` (`scheduling.services.booking_requests.booking_request`). 201."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(inputs.BookingRescheduleInput)
        moved = booking_request(
            RescheduleRequest(
                booking=booking, start=data["start"], reschedule_reason=data.get("rescheduling_reason", "")
            )
        ).booking
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


class BookingMarkAbsentView(BookingMixin, V2View):
    """`{host?, attendees?: [{email, absent}]}` → 200 with the booking (`absentHost`, each
    attendee's `absent`). The rules are `booking_mark_absent`'s; BOOKING_NO_SHOW_UPDATED is sent
    when attendees are marked."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(inputs.MarkAbsentInput)
        attendees = [(attendee["email"], attendee["absent"]) for attendee in data.get("attendees", [])]
        booking_mark_absent(booking=booking, actor=request.user, host=data.get("host"), attendees=attendees)
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))


class BookingAttendeesView(BookingMixin, V2View):
    """`{name, email, timeZone, language?, phoneNumber?}` → 201 with the new attendee. Anyone who
    sees the booking may add one (its host's side or one of its attendees, as in Cal.com);
    `phoneNumber` is validated and not kept (attendees here have no phone number)."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(inputs.AddAttendeeInput)
        attendee = booking_attendee_add(
            booking=booking,
            name=data["name"],
            email=data["email"],
            time_zone=data["time_zone"],
            locale=data.get("language", "en"),
        )
        return self.success(shapes.added_attendee_2024_08_13(attendee), status_code=status.HTTP_201_CREATED)
