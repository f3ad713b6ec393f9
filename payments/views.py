from core.query import Boolean, Integer, QueryParameters
from core.scopes import READ_PAYMENT
from core.viewsets import ListResourceMixin, ResourceViewSet, RetrieveResourceMixin
from payments.selectors import payment_list
from payments.serializers import PaymentSerializer


class PaymentFilters(QueryParameters):
    booking_id = Integer(minimum=1, description="Only the payments of this booking.")
    success = Boolean(description="`true`: only the payments that succeeded; `false`: only the others.")
    refunded = Boolean(description="`true`: only the refunded payments; `false`: only the others.")


class PaymentViewSet(ListResourceMixin, RetrieveResourceMixin, ResourceViewSet):
    """Read-only: POST, PATCH and DELETE are 405."""

    selector = payment_list
    scopes = {"GET": READ_PAYMENT}
    envelope_singular = "payment"
    envelope_plural = "payments"
    serializer_class = PaymentSerializer
    list_filters = PaymentFilters
