"""Which bookings a caller may see: those they organise (system admins: all)."""

from datetime import datetime

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from accounts.models import User
from payments.models import Payment
from scheduling.models import Attendee, Booking


def booking_list(
    *,
    user: User,
    user_ids: list[int] | None = None,
    statuses: list[str] | None = None,
    event_type_ids: list[int] | None = None,
    after_start_time: datetime | None = None,
    before_end_time: datetime | None = None,
    attendee_emails: tuple[str, ...] = (),
    recurring_event_id: str | None = None,
    order_by: tuple[str, ...] = ("id",),
) -> QuerySet[Booking]:
    """The bookings the caller organises, or for system admins everyone's (narrowed by
    `user_ids`), with what `BookingSerializer` shows: for the writes and the bodies they answer
    with, and for GETs read as rows (core.reads).

    `after_start_time` keeps bookings starting at or after it; `before_end_time` those ending at
    or before it; `attendee_emails` those with an attendee of one of these addresses;
    `recurring_event_id` the occurrences of one recurring series.
    """
    queryset = Booking.objects.select_related("organizer", "event_type", "rescheduled_from").prefetch_related(
        Prefetch("attendees", queryset=Attendee.objects.order_by("id"))
    )
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
    if recurring_event_id is not None:
        queryset = queryset.filter(recurring_event_id=recurring_event_id)
    if attendee_emails:
        # EXISTS rather than a join: a booking with two matching attendees is still one row.
        matching = Attendee.objects.filter(booking_id=OuterRef("pk"), email__in=attendee_emails)
        queryset = queryset.filter(Exists(matching))
    return queryset.order_by(*order_by)


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


def booking_for_update(*, booking_id: int) -> Booking:
    """The booking row locked for a lifecycle change, with what its payload needs."""
    return (
        Booking.objects.select_for_update(of=("self",))
        .select_related("organizer", "event_type", "rescheduled_from")
        .get(pk=booking_id)
    )
