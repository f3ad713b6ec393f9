from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.viewsets import (
    CreateModelMixin,
    ListModelMixin,
    ResourceViewSet,
    RetrieveModelMixin,
    UpdateModelMixin,
)
from scheduling.models import BookingStatus
from scheduling.selectors.bookings import booking_list, booking_rows
from scheduling.selectors.event_types import event_type_bookable
from scheduling.serializers.bookings import (
    BookingCancelSerializer,
    BookingCreateSerializer,
    BookingSerializer,
    BookingUpdateSerializer,
)
from scheduling.services.bookings import (
    booking_cancel,
    booking_confirm,
    booking_create,
    booking_reject,
    booking_reschedule,
)
from scheduling.views.slots import query_instant


def _repeated(request, name: str) -> list[str]:
    """`?status=ACCEPTED&status=PENDING` and `?status=ACCEPTED,PENDING` alike."""
    return [part.strip() for raw in request.query_params.getlist(name) for part in raw.split(",") if part.strip()]


class BookingViewSet(ListModelMixin, RetrieveModelMixin, CreateModelMixin, UpdateModelMixin, ResourceViewSet):
    """Bookings the caller organises (system admins: all). Create, reschedule, confirm or reject,
    cancel; there is no hard delete."""

    scopes = {"GET": "READ_BOOKING", "POST": "WRITE_BOOKING", "PATCH": "WRITE_BOOKING", "DELETE": "WRITE_BOOKING"}
    envelope_singular = "booking"
    envelope_plural = "bookings"
    serializer_class = BookingSerializer
    input_serializer_class = BookingCreateSerializer
    update_serializer_class = BookingUpdateSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, many=True, enum=BookingStatus.values),
            OpenApiParameter("eventTypeId", int, many=True),
            OpenApiParameter("afterStartTime", str, description="Bookings starting at or after (ISO 8601)."),
            OpenApiParameter("beforeEndTime", str, description="Bookings ending at or before (ISO 8601)."),
            OpenApiParameter("userId", int, many=True, description="System admins only."),
        ]
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    def get_queryset(self):
        # Reads get rows, not model instances; writes (and the bodies they answer with) get models.
        if self.action == "list":
            return booking_rows(user=self.request.user, user_ids=self.requested_user_ids(), **self._list_filters())
        if self.action == "retrieve":
            return booking_rows(user=self.request.user)
        return booking_list(user=self.request.user)

    def _list_filters(self) -> dict:
        request = self.request
        statuses = [status.upper() for status in _repeated(request, "status")]
        unknown = [status for status in statuses if status not in BookingStatus.values]
        if unknown:
            raise ValidationError({"status": [f"'{unknown[0]}' is not one of {', '.join(BookingStatus.values)}."]})
        event_type_ids = []
        for raw in _repeated(request, "eventTypeId"):
            try:
                event_type_ids.append(int(raw))
            except ValueError:
                raise ValidationError({"eventTypeId": [f"'{raw}' is not an integer."]}) from None
        return {
            "statuses": statuses,
            "event_type_ids": event_type_ids,
            "after_start_time": query_instant(request, "afterStartTime"),
            "before_end_time": query_instant(request, "beforeEndTime", end=True),
        }

    def perform_create(self, data):
        event_type_id = data.pop("event_type_id")
        event_type = event_type_bookable(user=self.request.user, event_type_id=event_type_id)
        if event_type is None:
            raise DjangoValidationError({"eventTypeId": f"Event type {event_type_id} does not exist."})
        return booking_create(
            event_type=event_type,
            attendee_name=data.pop("name"),
            attendee_email=data.pop("email"),
            attendee_time_zone=data.pop("time_zone"),
            **data,
        )

    def perform_update(self, instance, data):
        if data.get("status") == BookingStatus.ACCEPTED:
            return booking_confirm(booking=instance)
        if data.get("status") == BookingStatus.REJECTED:
            return booking_reject(booking=instance)
        return booking_reschedule(booking=instance, start=data["start_time"], end=data.get("end_time"))

    @extend_schema(request=BookingCancelSerializer, responses=BookingSerializer)
    @action(detail=True, methods=["delete"], url_path="cancel")
    def cancel(self, request, *args, **kwargs):
        """Cancel with an optional `cancellationReason` (in the body, or as a query parameter as
        Cal.com's v1 clients send it)."""
        instance = self.get_object()
        serializer = BookingCancelSerializer(data=request.data if request.data else {})
        serializer.is_valid(raise_exception=True)
        reason = serializer.validated_data.get(
            "cancellation_reason", request.query_params.get("cancellationReason", "")
        )
        booking = self.reload(booking_cancel(booking=instance, cancellation_reason=reason))
        return Response(
            {
                "booking": self.get_output_serializer(booking).data,
                "message": f"Booking with id: {booking.pk} cancelled successfully",
            }
        )
