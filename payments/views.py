from core.query import Boolean, Integer, QueryParameters
from core.scopes import READ_PAYMENT
from core.viewsets import ListModelMixin, ResourceViewSet, RetrieveModelMixin
from payments.selectors import payment_list
from payments.serializers import PaymentSerializer


class PaymentFilters(QueryParameters):
    booking_id = Integer(minimum=1, description="Only the payments of this booking.")
    success = Boolean(description="`true`: only the payments that succeeded; `false`: only the others.")
    refunded = Boolean(description="`true`: only the refunded payments; `false`: only the others.")


class PaymentViewSet(ListModelMixin, RetrieveModelMixin, ResourceViewSet):
    """Read-only: POST, PATCH and DELETE are 405."""

    scopes = {"GET": READ_PAYMENT}
    envelope_singular = "payment"
    envelope_plural = "payments"
    serializer_class = PaymentSerializer
    list_filters = PaymentFilters

    def get_queryset(self):
        if self.action != "list":
            return payment_list(user=self.request.user)
        request = self.request
        filters = self.list_filters.parse(request)
        return payment_list(user=request.user, user_ids=self.requested_user_ids(), **filters)
