"""The time a user is busy as a host of team bookings they do not organize (`BookingHost`): the
other hosts of a collective booking, the fixed hosts of a round-robin one. Read beside the user's
own bookings wherever their busy time is (`scheduling.selectors.slots._busy`)."""

import functools
from datetime import datetime, timedelta

from accounts.models import User
from core.compiled_queries import CompiledValues, Parameter
from scheduling.models import Booking, BookingStatus


def team_booking_busy(user_id: int, start: datetime, end: datetime, exclude_booking_id: int | None):
    """The accepted and pending bookings near [start, end) that `user_id` attends as a team host,
    each widened by its event type's buffers."""
    rows = _team_booking_query(excluding=exclude_booking_id is not None).rows(
        user_id=user_id, start=start, end=end, excluded=exclude_booking_id
    )
    return tuple(
        (booking_start - timedelta(minutes=before or 0), booking_end + timedelta(minutes=after or 0))
        for booking_start, booking_end, before, after in rows
    )


@functools.cache
def _team_booking_query(*, excluding: bool) -> CompiledValues:
    moment = Booking._meta.get_field("start_time")
    bookings = Booking.objects.filter(
        team_hosts__user_id=Parameter("user_id", User._meta.pk),
        status__in=(BookingStatus.ACCEPTED, BookingStatus.PENDING),
        start_time__lt=Parameter("end", moment),
        end_time__gt=Parameter("start", moment),
    ).order_by()
    if excluding:
        bookings = bookings.exclude(pk=Parameter("excluded", Booking._meta.pk))
    return CompiledValues(
        bookings.values_list(
            "start_time", "end_time", "event_type__before_event_buffer", "event_type__after_event_buffer"
        )
    )
