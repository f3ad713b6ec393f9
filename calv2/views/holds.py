"""Held time, Cal.com v2's way: slot reservations (`/v2/slots/reservations[/{uid}]`) and the
caller's out-of-office entries (`/v2/me/ooo[/{id}]`). Both are busy time for slots and bookings
(holds.selectors.held_time)."""

from django.utils import timezone
from rest_framework import serializers, status

from calv2 import inputs
from calv2.shapes import iso_ms
from calv2.views.base import V2View
from core.exceptions import NotFound
from core.scopes import READ_BOOKING, READ_SCHEDULE, WRITE_BOOKING, WRITE_SCHEDULE
from holds.models import OutOfOfficeReason
from holds.selectors import out_of_office_get, out_of_office_list, reservation_get
from holds.services import (
    RESERVATION_MINUTES_MAX,
    out_of_office_create,
    out_of_office_delete,
    out_of_office_update,
    reservation_delete,
)
from scheduling.serializers.bookings import InstantField, StrictIntegerField
from scheduling.services.reservations import slot_reservation_update, slot_reserve

# --- slot reservations ------------------------------------------------------------------------


class ReserveSlotInput(inputs.V2Input):
    event_type_id = StrictIntegerField(min_value=1)
    slot_start = InstantField()
    slot_duration = StrictIntegerField(min_value=1, max_value=24 * 60, required=False)
    reservation_duration = StrictIntegerField(min_value=1, max_value=RESERVATION_MINUTES_MAX, required=False)


def reservation_shape(reservation) -> dict:
    """Cal.com's `ReserveSlotOutput_2024_09_04`."""
    return {
        "eventTypeId": reservation.event_type_id,
        "slotStart": iso_ms(reservation.slot_start),
        "slotEnd": iso_ms(reservation.slot_end),
        "slotDuration": int((reservation.slot_end - reservation.slot_start).total_seconds() // 60),
        "reservationUid": str(reservation.uid),
        "reservationDuration": reservation.minutes,
        "reservationUntil": iso_ms(reservation.reserved_until),
    }


class ReservationMixin:
    def reservation_arguments(self) -> dict:
        data = self.body(ReserveSlotInput)
        return {
            "actor": self.request.user,
            "event_type_id": data["event_type_id"],
            "slot_start": data["slot_start"],
            "slot_duration": data.get("slot_duration"),
            "reservation_duration": data.get("reservation_duration"),
            "now": timezone.now(),
        }

    def live_reservation(self, uid: str):
        reservation = reservation_get(uid=uid)
        if reservation is None:
            raise NotFound(f"Reserved slot with uid={uid} not found.")
        return reservation


class SlotReservationsView(ReservationMixin, V2View):
    scopes = {"POST": WRITE_BOOKING}

    def post(self, request):
        reservation = slot_reserve(**self.reservation_arguments())
        return self.success(reservation_shape(reservation), status_code=status.HTTP_201_CREATED)


class SlotReservationView(ReservationMixin, V2View):
    """GET answers `data: null` for an unknown or expired reservation, as Cal.com does."""

    scopes = {"GET": READ_BOOKING, "PATCH": WRITE_BOOKING, "DELETE": WRITE_BOOKING}

    def get(self, request, uid):
        reservation = reservation_get(uid=uid)
        return self.success(reservation_shape(reservation) if reservation is not None else None)

    def patch(self, request, uid):
        reservation = self.live_reservation(uid)
        reservation = slot_reservation_update(reservation=reservation, **self.reservation_arguments())
        return self.success(reservation_shape(reservation))

    def delete(self, request, uid):
        reservation_delete(reservation=self.live_reservation(uid), actor=request.user)
        return self.success(None)


# --- out of office ----------------------------------------------------------------------------


class OutOfOfficeInput(inputs.V2Input):
    start = InstantField()
    end = InstantField()
    notes = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    to_user_id = StrictIntegerField(min_value=1, required=False, allow_null=True)
    reason = serializers.ChoiceField(choices=OutOfOfficeReason.values, required=False)


class OutOfOfficeUpdateInput(OutOfOfficeInput):
    start = InstantField(required=False)
    end = InstantField(required=False)


def out_of_office_shape(entry) -> dict:
    """Cal.com's `UserOooOutputDto`."""
    return {
        "userId": entry.user_id,
        "toUserId": entry.to_user_id,
        "id": entry.pk,
        "uuid": str(entry.uuid),
        "start": iso_ms(entry.start),
        "end": iso_ms(entry.end),
        "notes": entry.notes,
        "reason": entry.reason,
    }


class OutOfOfficeEntriesView(V2View):
    scopes = {"GET": READ_SCHEDULE, "POST": WRITE_SCHEDULE}

    def get(self, request):
        entries = out_of_office_list(user=request.user)
        return self.success([out_of_office_shape(entry) for entry in entries])

    def post(self, request):
        data = self.body(OutOfOfficeInput)
        entry = out_of_office_create(user=request.user, **data)
        return self.success(out_of_office_shape(entry), status_code=status.HTTP_201_CREATED)


class OutOfOfficeEntryView(V2View):
    scopes = {"GET": READ_SCHEDULE, "PATCH": WRITE_SCHEDULE, "DELETE": WRITE_SCHEDULE}

    def entry(self, entry_id: int):
        entry = out_of_office_get(user=self.request.user, entry_id=entry_id)
        if entry is None:
            raise NotFound(f"Out-of-office entry with id={entry_id} not found.")
        return entry

    def get(self, request, ooo_id):
        return self.success(out_of_office_shape(self.entry(ooo_id)))

    def patch(self, request, ooo_id):
        entry = self.entry(ooo_id)
        data = self.body(OutOfOfficeUpdateInput)
        return self.success(out_of_office_shape(out_of_office_update(entry=entry, **data)))

    def delete(self, request, ooo_id):
        entry = self.entry(ooo_id)
        shape = out_of_office_shape(entry)
        out_of_office_delete(entry=entry)
        return self.success(shape)
