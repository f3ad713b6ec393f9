from drf_spectacular.utils import extend_schema

from core.query import query_bool, query_int
from core.scopes import READ_PAYMENT
from core.viewsets import ListModelMixin, ResourceViewSet, RetrieveModelMixin
from payments.selectors import payment_list
from payments.serializers import PaymentFilterSerializer, PaymentSerializer


class PaymentViewSet(ListModelMixin, RetrieveModelMixin, ResourceViewSet):
    """Read-only: POST, PATCH and DELETE are 405."""

    scopes = {"GET": READ_PAYMENT}
    envelope_singular = "payment"
    envelope_plural = "payments"
    serializer_class = PaymentSerializer

    def get_queryset(self):
        if self.action != "list":
            return payment_list(user=self.request.user)
        request = self.request
        filters = {
            "booking_id": query_int(request, "bookingId", minimum=1),
            "success": query_bool(request, "success"),
            "refunded": query_bool(request, "refunded"),
        }
        return payment_list(user=request.user, user_ids=self.requested_user_ids(), **filters)

    @extend_schema(parameters=[PaymentFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)
