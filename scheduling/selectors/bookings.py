"""Which bookings a caller may see: those they organise (system admins: all)."""

from datetime import datetime

from django.db.models import Prefetch, QuerySet

from accounts.models import User
from scheduling.models import Attendee, Booking


def booking_list(
    *,
    user: User,
    user_ids: list[int] | None = None,
    statuses: list[str] | None = None,
    event_type_ids: list[int] | None = None,
    after_start_time: datetime | None = None,
    before_end_time: datetime | None = None,
) -> QuerySet[Booking]:
    """Bookings the caller organises, or for system admins everyone's (narrowed by `user_ids`).

    `after_start_time` keeps bookings starting at or after it; `before_end_time` those ending at
    or before it.
    """
    queryset = Booking.objects.select_related("organizer", "event_type").prefetch_related(
        # A plain list per booking: cheaper than a prefetched QuerySet per booking.
        Prefetch("attendees", queryset=Attendee.objects.order_by("id"), to_attr="attendee_rows")
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
    return queryset.order_by("id")


def booking_for_update(*, booking_id: int) -> Booking:
    """The booking row locked for a lifecycle change, with what its payload needs."""
    return (
        Booking.objects.select_for_update(of=("self",))
        .select_related("organizer", "event_type", "rescheduled_from")
        .get(pk=booking_id)
    )
