from collections.abc import Mapping

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.response import Response

from core.query import Boolean, Choice, Email, Instant, Integer, ListOf, QueryParameters, Text
from core.scopes import READ_BOOKING, WRITE_BOOKING
from core.serializers import to_camel
from core.viewsets import (
    CreateResourceMixin,
    ListResourceMixin,
    ResourceViewSet,
    RetrieveResourceMixin,
    UpdateResourceMixin,
)
from notifications.switches import for_request as mail_switches_for
from scheduling.models import BookingStatus
from scheduling.selectors.bookings import booking_list, payment_summaries
from scheduling.serializers.bookings import (
    BookingCancelledSerializer,
    BookingCancelSerializer,
    BookingConfirmedSerializer,
    BookingConfirmSerializer,
    BookingCreatedSerializer,
    BookingCreateSerializer,
    BookingRescheduledSerializer,
    BookingRescheduleSerializer,
    BookingSerializer,
    BookingUpdateSerializer,
    booking_request_from_v1,
)
from scheduling.services.booking_requests import CancelRequest, EventTypeNotFound, RescheduleRequest, booking_request
from scheduling.services.bookings import booking_decide, booking_edit
from scheduling.services.recurring import booking_decide_series

# What Cal.com v1's answer to POST /bookings said about where the booking came from.
CREATION_SOURCE = "API_V1"


class BookingFilters(QueryParameters):
    """GET /bookings (docs/scheduling.md): this service's filters and Cal.com v1's; all that are
    sent apply together. v1's `dateFrom` / `dateTo` bound the start and the end as given (a bare
    date is its midnight UTC), beside this service's `afterStartTime` / `beforeEndTime`."""

    status = ListOf(
        Choice([*BookingStatus.values, "upcoming"], normalize=str.upper),
        comma_separated=True,
        description="`upcoming` (Cal.com v1): bookings that have not started yet.",
    )
    event_type_id = ListOf(Integer(minimum=1), comma_separated=True)
    after_start_time = Instant(description="Bookings starting at or after (ISO 8601).")
    date_from = Instant(description="Cal.com v1: bookings starting at or after (ISO 8601).")
    before_end_time = Instant(end=True, description="Bookings ending at or before (ISO 8601).")
    date_to = Instant(description="Cal.com v1: bookings ending at or before (ISO 8601; a date is its midnight UTC).")
    attendee_email = ListOf(Email(), description="Bookings with an attendee of this address.")
    recurring_event_id = Text(description="The occurrences of this recurring series.")
    order = Choice(["asc", "desc"], default="asc", description="With `sortBy`.")
    sort_by = Choice({"createdAt": "created_at", "updatedAt": "updated_at"}, description="Cal.com v1; default: by id.")
    expand = ListOf(
        Choice(["team"]),
        description="Cal.com v1's only expansion, accepted; the event type's team is not embedded (GET /teams/{id}).",
    )


class CancelParameters(QueryParameters):
    """A cancellation's options in the query string, as Cal.com v1's clients send them; the body
    may carry the same fields (`BookingCancelSerializer`), and the body wins."""

    cancellation_reason = Text(description="Also accepted in the body.")
    all_remaining_bookings = Boolean(
        description="Also cancel every occurrence of the booking's recurring series that has not started."
    )
    cancel_subsequent_bookings = Boolean(description="Also cancel every later occurrence of its recurring series.")


# DELETE /bookings/{id} and DELETE /bookings/{id}/cancel are one operation under two paths.
CANCEL_SCHEMA = extend_schema(
    request=BookingCancelSerializer,
    responses=BookingCancelledSerializer,
    parameters=CancelParameters.openapi_parameters(),
)


class BookingViewSet(
    ListResourceMixin, RetrieveResourceMixin, CreateResourceMixin, UpdateResourceMixin, ResourceViewSet
):
    """Bookings the caller may see (scheduling.selectors.bookings: organizer, event type owner,
    team admins, attendees; system admins: all). Create (Cal.com v1's body and answer), edit,
    reschedule, confirm or reject, cancel; DELETE cancels, there is no hard delete."""

    selector = booking_list
    scopes = {"GET": READ_BOOKING, "POST": WRITE_BOOKING, "PATCH": WRITE_BOOKING, "DELETE": WRITE_BOOKING}
    envelope_singular = "booking"
    envelope_plural = "bookings"
    serializer_class = BookingSerializer
    input_serializer_class = BookingCreateSerializer
    answers_as_written = True  # every way of booking (`create` below)
    update_serializer_class = BookingUpdateSerializer
    conflict_actions = ("create", "partial_update", "reschedule", "confirm", "cancel", "destroy")
    list_filters = BookingFilters

    def list_arguments(self) -> dict:
        filters = self.list_filters.parse(self.request)
        # Cal.com v1's one status filter: bookings that have not started yet.
        upcoming = "UPCOMING" in filters["status"]
        starts = [filters["after_start_time"], filters["date_from"], timezone.now() if upcoming else None]
        ends = [filters["before_end_time"], filters["date_to"]]
        return {
            "user_ids": self.requested_user_ids(),
            "statuses": [status for status in filters["status"] if status != "UPCOMING"],
            "event_type_ids": filters["event_type_id"],
            "after_start_time": max((start for start in starts if start is not None), default=None),
            "before_end_time": min((end for end in ends if end is not None), default=None),
            "attendee_emails": tuple(filters["attendee_email"]),
            "recurring_event_id": filters["recurring_event_id"],
            "order_by": self._v1_order(filters["sort_by"], filters["order"]),
        }

    @staticmethod
    def _v1_order(sort_by: str | None, order: str) -> tuple[str, ...]:
        """v1's `sortBy` with `order`; by id otherwise. The id breaks ties so that pages stay stable."""
        if sort_by is None:
            return ("id",)
        sign = "-" if order == "desc" else ""
        return (f"{sign}{sort_by}", f"{sign}id")

    @extend_schema(request=BookingCreateSerializer, responses=BookingCreatedSerializer)
    def create(self, request, *args, **kwargs):
        """Cal.com v1's booking request; the answer is v1's: the booking object itself at the top
        level (not in an envelope), with `payment` and `paymentRequired`, status 200 and `Location`."""
        # Every way of booking (`booking_request`: one booking, a series, one occurrence of a series)
        # returns the booking as written with its attendees and payments loaded, so it is answered unread: read
        # back it would show the same (scheduling/tests/test_bookings_api.py compares the two).
        with mail_switches_for(request):  # noEmail, and the credential's mail bound
            booking = self.created_answer(self.perform_create(self.validated_input()))
        payments = payment_summaries(booking.payments.all())
        body = {
            **self.get_output_serializer(booking).data,
            "payment": payments,
            "paymentRequired": False,
            "creationSource": CREATION_SOURCE,
        }
        unpaid = next((payment for payment in payments if not payment["success"]), None)
        if unpaid is not None:
            body.update(paymentRequired=True, paymentUid=unpaid["uid"], paymentId=unpaid["id"])
        return Response(body, status=status.HTTP_200_OK, headers={"Location": self.location_url(booking)})

    def perform_create(self, data):
        try:
            return booking_request(booking_request_from_v1(data, actor=self.request.user)).booking
        except EventTypeNotFound as error:
            # v1 answered an event type it could not book as a 400 on the field that named it.
            raise DjangoValidationError({error.field_name: str(error.detail)}) from None

    def perform_update(self, instance, data):
        return booking_edit(
            booking=instance,
            actor=self.request.user,
            start=data.pop("start_time", None),
            end=data.pop("end_time", None),
            organizer_id=data.pop("user_id", None),
            **data,
        )

    @extend_schema(request=BookingConfirmSerializer, responses=BookingConfirmedSerializer)
    @action(detail=True, methods=["post"], url_path="confirm")
    def confirm(self, request, *args, **kwargs):
        """Cal.com v1's confirmation of a PENDING booking: `{"confirmed": true}` accepts it
        (BOOKING_CREATED), `false` rejects it (BOOKING_REJECTED); with the booking's
        `recurringEventId`, every PENDING occurrence of its series alike. Answers v1's
        `{message, status}` with the booking."""
        instance = self.get_object()
        serializer = BookingConfirmSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        confirmed = serializer.validated_data["confirmed"]
        series_id = serializer.validated_data.get("recurring_event_id")
        if series_id:
            decided = booking_decide_series(
                booking=instance, actor=request.user, confirmed=confirmed, recurring_event_id=series_id
            )
        else:
            decided = booking_decide(booking=instance, actor=request.user, confirmed=confirmed)
        booking = self.reload(decided)
        return Response(
            {
                "message": "confirmed" if confirmed else "rejected",
                "status": booking.status,
                "booking": self.get_output_serializer(booking).data,
            }
        )

    @extend_schema(request=BookingRescheduleSerializer, responses=BookingRescheduledSerializer)
    @action(detail=True, methods=["post"], url_path="reschedule")
    def reschedule(self, request, *args, **kwargs):
        """Cal.com's reschedule: a new booking at `start` replaces this one, which becomes CANCELLED
        with `rescheduled: true`. Answers `{"booking": <the new booking>}` with its `Location`."""
        instance = self.get_object()
        serializer = BookingRescheduleSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        moved = booking_request(RescheduleRequest(booking=instance, **serializer.validated_data)).booking
        booking = self.reload(moved)
        return Response(
            {"booking": self.get_output_serializer(booking).data, "message": "Booking rescheduled successfully"},
            headers={"Location": request.build_absolute_uri(f"{request.path.rsplit('/', 2)[0]}/{booking.pk}")},
        )

    @CANCEL_SCHEMA
    @action(detail=True, methods=["delete"], url_path="cancel")
    def cancel(self, request, *args, **kwargs):
        """Cancel, as Cal.com v1's DELETE /bookings/{id}/cancel did; the same as DELETE /bookings/{id}."""
        return self._cancel(request)

    @CANCEL_SCHEMA
    def destroy(self, request, *args, **kwargs):
        """Cancels (bookings are never deleted), as Cal.com v1's DELETE /bookings/{id} did."""
        return self._cancel(request)

    def _cancel(self, request):
        """`cancellationReason` in the body or, as Cal.com's v1 clients send it, in the query
        string; `cancelledBy` is the caller's email. The answer is v1's, plus the booking."""
        instance = self.get_object()
        body = request.data if request.data else {}
        query = {to_camel(name): value for name, value in CancelParameters.parse(request).items() if value is not None}
        serializer = BookingCancelSerializer(data={**query, **body} if isinstance(body, Mapping) else body)
        serializer.is_valid(raise_exception=True)
        reason = serializer.validated_data.get("cancellation_reason", "")
        all_remaining = serializer.validated_data.get("all_remaining_bookings", False)
        subsequent = serializer.validated_data.get("cancel_subsequent_bookings", False)
        cancel = CancelRequest(
            booking=instance,
            cancelled_by=request.user.email,
            cancellation_reason=reason,
            all_remaining=all_remaining,
            subsequent=subsequent,
        )
        booking = self.reload(booking_request(cancel).booking)
        return Response(
            {
                "success": True,
                "message": "Booking successfully cancelled.",
                "onlyRemovedAttendee": False,
                "bookingId": booking.pk,
                "bookingUid": booking.uid,
                "booking": self.get_output_serializer(booking).data,
            }
        )
