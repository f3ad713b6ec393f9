"""Writes on payments. Payments arrive from payment apps; staff may only settle or refund them.

The API has no write endpoints for payments (docs/api.md, Payments); the admin's "mark paid" and "mark
refunded" actions call these, and so will any payment-app integration, so that the webhook events
(BOOKING_PAID, …) are emitted from one place.
"""

from django.core.exceptions import ValidationError
from django.db import transaction

from notifications.outbox import booking_paid
from payments.models import Payment
from webhooks.models import WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.sources import bookings


@transaction.atomic
def payment_mark_paid(*, payment: Payment) -> Payment:
    """Record that the money arrived. Marking an already-paid payment again changes nothing."""
    payment = Payment.objects.select_for_update().get(pk=payment.pk)
    if payment.success:
        return payment
    payment.success = True
    payment.full_clean()
    payment.save(update_fields=["success"])
    _emit_booking_paid(payment)
    return payment


def _emit_booking_paid(payment: Payment) -> None:
    """BOOKING_PAID with the booking's payload, in this transaction (the outbox). The payload is
    the scheduling app's, through `webhooks.sources`: bookings sit above payments, which a
    booking's creation writes, so this app imports nothing of scheduling."""
    booking = (
        Payment.objects.select_related("booking__organizer", "booking__event_type", "booking__rescheduled_from")
        .get(pk=payment.pk)
        .booking
    )
    emit_event(
        trigger=WebhookTrigger.BOOKING_PAID,
        payload=bookings().booking_payload(booking, trigger=WebhookTrigger.BOOKING_PAID, payment=payment),
        user=booking.organizer,
        event_type=booking.event_type,
    )
    booking_paid(booking)  # the confirmations held back until now (notifications)


@transaction.atomic
def payment_mark_refunded(*, payment: Payment) -> Payment:
    """Record a refund. Only money that arrived can be refunded (the database enforces it too)."""
    payment = Payment.objects.select_for_update().get(pk=payment.pk)
    if not payment.success:
        raise ValidationError(
            {"refunded": f"Payment {payment.uid} was never paid, so it cannot be refunded."}, code="not_paid"
        )
    if payment.refunded:
        return payment
    payment.refunded = True
    payment.full_clean()
    payment.save(update_fields=["refunded"])
    return payment
