"""Reads of payments: only those of bookings the caller organises (docs/api.md, Payments)."""

from django.db.models import QuerySet

from accounts.models import User
from payments.models import Payment


def payment_list(
    *,
    user: User,
    user_ids: list[int] | None = None,
    booking_id: int | None = None,
    success: bool | None = None,
    refunded: bool | None = None,
) -> QuerySet[Payment]:
    """Payments with their app and booking; a system admin sees all (narrowed by organizer).
    Payments are never written over the API: GETs read this queryset as rows (core.fastpath), one
    query with its joins."""
    queryset = Payment.objects.select_related("app", "booking")
    # By the payment's own copy of its booking's organizer: read along `payment_organizer_order`,
    # an organizer's payments cost what they are, however many bookings they have without one.
    if not user.is_system_admin:
        queryset = queryset.filter(organizer=user)
    if user_ids is not None:
        queryset = queryset.filter(organizer_id__in=user_ids)
    if booking_id is not None:
        queryset = queryset.filter(booking_id=booking_id)
    if success is not None:
        queryset = queryset.filter(success=success)
    if refunded is not None:
        queryset = queryset.filter(refunded=refunded)
    return queryset.order_by("id")
