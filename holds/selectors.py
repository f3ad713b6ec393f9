import uuid

from django.db.models import IntegerField, QuerySet, Value
from django.db.models.functions import Now
from django.utils import timezone

from holds.models import OutOfOfficeEntry, SlotReservation


def held_time(*, host_id, start, end) -> tuple[QuerySet, QuerySet]:
    """The host's held time near [start, end) as `(start, end, 0, 0)` rows (a booking's rows with
    no buffers), for the slots' busy-time statement to union with the bookings: unexpired slot
    reservations (by the database's clock) and out-of-office entries. The arguments may be the
    compiled statement's parameters (core.fastpath.compiled_queries.Parameter)."""
    no_buffer = {"before": Value(0, output_field=IntegerField()), "after": Value(0, output_field=IntegerField())}
    reservations = (
        SlotReservation.objects.filter(
            host_id=host_id, reserved_until__gt=Now(), slot_start__lt=end, slot_end__gt=start
        )
        .annotate(**no_buffer)
        .order_by()
        .values_list("slot_start", "slot_end", "before", "after")
    )
    away = (
        OutOfOfficeEntry.objects.filter(user_id=host_id, start__lt=end, end__gt=start)
        .annotate(**no_buffer)
        .order_by()
        .values_list("start", "end", "before", "after")
    )
    return reservations, away


def reservation_get(*, uid: str) -> SlotReservation | None:
    """An unexpired reservation by its uid (an expired one is as good as gone, as in Cal.com);
    None for a uid that is not a UUID at all."""
    try:
        uid = uuid.UUID(uid)
    except ValueError:
        return None
    return (
        SlotReservation.objects.select_related("event_type").filter(uid=uid, reserved_until__gt=timezone.now()).first()
    )


def out_of_office_list(*, user) -> QuerySet[OutOfOfficeEntry]:
    return OutOfOfficeEntry.objects.filter(user=user).select_related("to_user").order_by("start", "id")


def out_of_office_get(*, user, entry_id: int) -> OutOfOfficeEntry | None:
    return out_of_office_list(user=user).filter(pk=entry_id).first()
