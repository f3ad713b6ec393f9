"""Reads of payments: only those of bookings the caller organises (docs/api.md, Payments)."""

from types import SimpleNamespace

from django.db.models import QuerySet
from django.db.models.query import BaseIterable

from accounts.models import User
from payments.models import Payment

PAYMENT_ROW_FIELDS = (
    "id",
    "uid",
    "app_id",
    "booking_id",
    "amount",
    "fee",
    "currency",
    "success",
    "refunded",
    "data",
    "external_id",
    "payment_option",
)
BOOKING_ROW_FIELDS = ("uid", "title", "start_time", "end_time", "status")


class PaymentRowIterable(BaseIterable):
    """Yields read-only rows shaped like payments with their `app` and `booking` (what
    `PaymentSerializer` shows) from one `.values_list()` query, without building model instances.

    The queryset it iterates stays a plain `Payment` queryset until it is evaluated, so that the
    pagination's COUNT has only the join its visibility filter needs, not those of the row query."""

    def __iter__(self):
        columns = (*PAYMENT_ROW_FIELDS, "app__name", *(f"booking__{field}" for field in BOOKING_ROW_FIELDS))
        app_name_at = len(PAYMENT_ROW_FIELDS)
        apps: dict[str, SimpleNamespace] = {}
        for row in self.queryset.values_list(*columns):
            payment = SimpleNamespace(**dict(zip(PAYMENT_ROW_FIELDS, row[:app_name_at], strict=True)))
            payment.pk = payment.id
            payment.app = apps.get(payment.app_id)
            if payment.app is None and payment.app_id is not None:
                payment.app = apps[payment.app_id] = SimpleNamespace(slug=payment.app_id, name=row[app_name_at])
            payment.booking = SimpleNamespace(
                id=payment.booking_id, **dict(zip(BOOKING_ROW_FIELDS, row[app_name_at + 1 :], strict=True))
            )
            yield payment


def payment_rows(
    *,
    user: User,
    user_ids: list[int] | None = None,
    booking_id: int | None = None,
    success: bool | None = None,
    refunded: bool | None = None,
) -> QuerySet:
    """Payments as read-only rows with their app and booking, in one query; a system admin sees
    all (narrowed by organizer). Payments are never written over the API, so every read is rows;
    pagination and lookups work on it as on any queryset."""
    queryset = Payment.objects.all()
    if not user.is_system_admin:
        queryset = queryset.filter(booking__organizer=user)
    if user_ids is not None:
        queryset = queryset.filter(booking__organizer_id__in=user_ids)
    if booking_id is not None:
        queryset = queryset.filter(booking_id=booking_id)
    if success is not None:
        queryset = queryset.filter(success=success)
    if refunded is not None:
        queryset = queryset.filter(refunded=refunded)
    queryset._iterable_class = PaymentRowIterable  # kept by clones, as .values() keeps its own
    return queryset.order_by("id")
