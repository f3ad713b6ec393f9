"""A booking's people, as Cal.com's MCP server and CLI read and add them: the attendee list and
one attendee (`GET /v2/bookings/{uid}/attendees[/{attendeeId}]`) beside the add-attendee of
calv2.views.bookings, and guests added after booking (`POST /v2/bookings/{uid}/guests`)."""

from rest_framework import serializers

from calv2 import inputs, shapes
from calv2.views import bookings
from calv2.views.base import V2View
from core.exceptions import NotFound
from core.scopes import READ_BOOKING, WRITE_BOOKING
from scheduling.services.guests import MAX_GUESTS_PER_REQUEST, booking_guests_add


class BookingAttendeesView(bookings.BookingAttendeesView):
    """The add-attendee operation, plus the list of the booking's attendees (guests included)."""

    scopes = {**bookings.BookingAttendeesView.scopes, "GET": READ_BOOKING}

    def get(self, request, uid):
        booking = self.visible_booking(uid)
        attendees = sorted(booking.attendees.all(), key=lambda attendee: attendee.pk)
        return self.success([shapes.added_attendee_2024_08_13(attendee) for attendee in attendees])


class BookingAttendeeView(bookings.BookingMixin, V2View):
    scopes = {"GET": READ_BOOKING}

    def get(self, request, uid, attendee_id):
        booking = self.visible_booking(uid)
        attendee = next((attendee for attendee in booking.attendees.all() if attendee.pk == attendee_id), None)
        if attendee is None:
            raise NotFound(f"Attendee with id={attendee_id} not found in booking with uid={uid}.")
        return self.success(shapes.added_attendee_2024_08_13(attendee))


class GuestInput(inputs.V2Input):
    email = serializers.EmailField(max_length=254)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    time_zone = inputs.TimeZoneField(required=False)
    phone_number = serializers.CharField(max_length=50, required=False)
    language = serializers.CharField(max_length=35, required=False)


class AddGuestsInput(inputs.V2Input):
    guests = serializers.ListField(child=GuestInput(), min_length=1, max_length=MAX_GUESTS_PER_REQUEST)


class BookingGuestsView(bookings.BookingMixin, V2View):
    """Cal.com's add-guests: 200 with the booking. `phoneNumber` is validated and not kept
    (attendees here have no phone number); no e-mail is sent (this service sends none)."""

    scopes = {"POST": WRITE_BOOKING}

    def post(self, request, uid):
        booking = self.visible_booking(uid)
        data = self.body(AddGuestsInput)
        guests = [
            {
                "email": guest["email"],
                "name": guest.get("name", ""),
                "time_zone": guest.get("time_zone"),
                "locale": guest.get("language", "en"),
            }
            for guest in data["guests"]
        ]
        booking_guests_add(booking=booking, guests=guests)
        return self.success(shapes.booking_2024_08_13(self.visible_booking(uid)))
