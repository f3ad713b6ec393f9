"""Which bookings a caller may see: those they organise (system admins: all)."""

from datetime import datetime
from types import SimpleNamespace

from django.db.models import Exists, F, OuterRef, Prefetch, QuerySet
from django.db.models.query import BaseIterable

from accounts.models import User
from payments.models import Payment
from scheduling.models import Attendee, Booking


def booking_list(*, user: User) -> QuerySet[Booking]:
    """The caller's bookings as model instances with what `BookingSerializer` shows: for the
    writes and the bodies they answer with (reads use `booking_rows`). `from_reschedule` is the uid
    of the booking this one replaced (Cal.com's `fromReschedule`), read in the same query."""
    queryset = (
        Booking.objects.select_related("organizer", "event_type")
        .annotate(from_reschedule=F("rescheduled_from__uid"))
        .prefetch_related(
            # A plain list per booking: cheaper than a prefetched QuerySet per booking.
            Prefetch("attendees", queryset=Attendee.objects.order_by("id"), to_attr="attendee_rows")
        )
    )
    return _visible(queryset, user=user)


def booking_by_uid(*, user: User, uid: str) -> Booking | None:
    """The caller's booking with this uid (as `booking_list` sees it), or None."""
    return booking_list(user=user).filter(uid=uid).first()


def booking_payments(*, booking_id: int) -> list[dict]:
    """The booking's payments as Cal.com v1's booking answer embedded them: `{id, uid, success,
    paymentOption}` rows, oldest first."""
    rows = Payment.objects.filter(booking_id=booking_id).order_by("id")
    return [
        {"id": pk, "uid": uid, "success": success, "paymentOption": option}
        for pk, uid, success, option in rows.values_list("id", "uid", "success", "payment_option")
    ]


def _visible(
    queryset: QuerySet,
    *,
    user: User,
    user_ids: list[int] | None = None,
    statuses: list[str] | None = None,
    event_type_ids: list[int] | None = None,
    after_start_time: datetime | None = None,
    before_end_time: datetime | None = None,
    attendee_emails: tuple[str, ...] = (),
    order_by: tuple[str, ...] = ("id",),
) -> QuerySet:
    """Bookings the caller organises, or for system admins everyone's (narrowed by `user_ids`).

    `after_start_time` keeps bookings starting at or after it; `before_end_time` those ending at
    or before it; `attendee_emails` those with an attendee of one of these addresses.
    """
    if user_ids is not None:
        queryset = queryset.filter(organizer_id__in=user_ids)
    if not user.is_system_admin:
        queryset = queryset.filter(organizer=user)
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    if event_type_ids:
        queryset = queryset.filter(event_type_id__in=event_type_ids)
    if after_start_time is not None:
        queryset = queryset.filter(start_time__gte=after_start_time)
    if before_end_time is not None:
        queryset = queryset.filter(end_time__lte=before_end_time)
    if attendee_emails:
        # EXISTS rather than a join: a booking with two matching attendees is still one row.
        matching = Attendee.objects.filter(booking_id=OuterRef("pk"), email__in=attendee_emails)
        queryset = queryset.filter(Exists(matching))
    return queryset.order_by(*order_by)


BOOKING_ROW_FIELDS = (
    "id",
    "uid",
    "organizer_id",
    "event_type_id",
    "title",
    "description",
    "start_time",
    "end_time",
    "status",
    "location",
    "metadata",
    "cancellation_reason",
    "responses",
    "custom_inputs",
    "sms_reminder_number",
    "cancelled_by",
    "rescheduled",
    "ical_sequence",
    "created_at",
    "updated_at",
)
ORGANIZER_ROW_FIELDS = ("username", "name", "email", "time_zone")
EVENT_TYPE_ROW_FIELDS = ("title", "slug", "length")
ATTENDEE_ROW_FIELDS = ("id", "name", "email", "time_zone", "locale")


class BookingRowIterable(BaseIterable):
    """Yields read-only rows shaped like what `booking_list` gives the serializer (`organizer`,
    `event_type`, `attendee_rows`) from two `.values_list()` queries, the same two as
    `booking_list`'s, without building model instances.

    The queryset it iterates stays a plain `Booking` queryset until it is evaluated, so that the
    pagination's COUNT is the bare `SELECT COUNT(*) FROM booking WHERE …`, without the joins of
    the row query."""

    def __iter__(self):
        columns = (
            *BOOKING_ROW_FIELDS,
            "rescheduled_from__uid",
            *(f"organizer__{field}" for field in ORGANIZER_ROW_FIELDS),
            *(f"event_type__{field}" for field in EVENT_TYPE_ROW_FIELDS),
        )
        from_reschedule_at = len(BOOKING_ROW_FIELDS)
        organizer_at = from_reschedule_at + 1
        event_type_at = organizer_at + len(ORGANIZER_ROW_FIELDS)
        organizers: dict[int, SimpleNamespace] = {}
        event_types: dict[int, SimpleNamespace] = {}
        bookings: dict[int, SimpleNamespace] = {}
        for row in self.queryset.values_list(*columns):
            booking = SimpleNamespace(**dict(zip(BOOKING_ROW_FIELDS, row[:from_reschedule_at], strict=True)))
            booking.pk = booking.id
            booking.from_reschedule = row[from_reschedule_at]
            booking.organizer = organizers.get(booking.organizer_id)
            if booking.organizer is None:
                booking.organizer = organizers[booking.organizer_id] = SimpleNamespace(
                    id=booking.organizer_id,
                    **dict(zip(ORGANIZER_ROW_FIELDS, row[organizer_at:event_type_at], strict=True)),
                )
            booking.event_type = event_types.get(booking.event_type_id)
            if booking.event_type is None and booking.event_type_id is not None:
                booking.event_type = event_types[booking.event_type_id] = SimpleNamespace(
                    id=booking.event_type_id, **dict(zip(EVENT_TYPE_ROW_FIELDS, row[event_type_at:], strict=True))
                )
            booking.attendee_rows = []
            bookings[booking.id] = booking
        if bookings:
            attendees = Attendee.objects.filter(booking_id__in=bookings).order_by("id")
            for booking_id, *attendee in attendees.values_list("booking_id", *ATTENDEE_ROW_FIELDS):
                bookings[booking_id].attendee_rows.append(
                    SimpleNamespace(**dict(zip(ATTENDEE_ROW_FIELDS, attendee, strict=True)))
                )
        yield from bookings.values()


def booking_rows(
    *,
    user: User,
    user_ids: list[int] | None = None,
    statuses: list[str] | None = None,
    event_type_ids: list[int] | None = None,
    after_start_time: datetime | None = None,
    before_end_time: datetime | None = None,
    attendee_emails: tuple[str, ...] = (),
    order_by: tuple[str, ...] = ("id",),
) -> QuerySet:
    """The caller's bookings for reading only (GET), filtered as `_visible` says: the visibility,
    order and queries of `booking_list`, but rows instead of model instances; pagination and
    lookups work on it as on any queryset."""
    queryset = _visible(
        Booking.objects.all(),
        user=user,
        user_ids=user_ids,
        statuses=statuses,
        event_type_ids=event_type_ids,
        after_start_time=after_start_time,
        before_end_time=before_end_time,
        attendee_emails=attendee_emails,
        order_by=order_by,
    )
    queryset._iterable_class = BookingRowIterable  # kept by clones, as .values() keeps its own
    return queryset


def booking_for_update(*, booking_id: int) -> Booking:
    """The booking row locked for a lifecycle change, with what its payload needs."""
    return (
        Booking.objects.select_for_update(of=("self",))
        .select_related("organizer", "event_type", "rescheduled_from")
        .get(pk=booking_id)
    )
