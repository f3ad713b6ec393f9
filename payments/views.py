from drf_spectacular.utils import extend_schema

from core.viewsets import ListModelMixin, ResourceViewSet, RetrieveModelMixin
from payments.selectors import payment_rows
from payments.serializers import PaymentFilterSerializer, PaymentSerializer


class PaymentViewSet(ListModelMixin, RetrieveModelMixin, ResourceViewSet):
    """Read-only: POST, PATCH and DELETE are 405."""

    scopes = {"GET": "READ_PAYMENT"}
    envelope_singular = "payment"
    envelope_plural = "payments"
    serializer_class = PaymentSerializer

    def get_queryset(self):
        if self.action != "list":
            return payment_rows(user=self.request.user)
        filters = PaymentFilterSerializer(data=self.filter_params())
        filters.is_valid(raise_exception=True)
        return payment_rows(user=self.request.user, user_ids=self.requested_user_ids(), **filters.validated_data)

    def filter_params(self) -> dict:
        names = ("bookingId", "success", "refunded")
        return {name: self.request.query_params[name] for name in names if name in self.request.query_params}

    @extend_schema(parameters=[PaymentFilterSerializer])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)
