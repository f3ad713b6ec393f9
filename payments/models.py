from django.conf import settings
from django.db import models
from django.db.models import Q


class PaymentOption(models.TextChoices):
    ON_BOOKING = "ON_BOOKING"
    HOLD = "HOLD"


class Payment(models.Model):
    """A payment for a booking. Amounts are integers in minor units of `currency`."""

    uid = models.CharField(max_length=64, unique=True)
    app = models.ForeignKey("core.App", null=True, blank=True, on_delete=models.SET_NULL, related_name="payments")
    booking = models.ForeignKey("scheduling.Booking", on_delete=models.CASCADE, related_name="payments")
    # The booking's organizer, kept with the payment (written with it, and again when a booking is
    # handed to another host): an organizer's payments are read along their own index
    # (`payment_organizer_order`), not found among everyone's by their bookings.
    organizer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    amount = models.PositiveIntegerField()
    fee = models.PositiveIntegerField(default=0)
    currency = models.CharField(max_length=3)
    success = models.BooleanField(default=False)
    refunded = models.BooleanField(default=False)
    data = models.JSONField(default=dict, blank=True)
    external_id = models.CharField(max_length=200, blank=True)
    payment_option = models.CharField(max_length=10, choices=PaymentOption.choices, default=PaymentOption.ON_BOOKING)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(currency__regex=r"^[a-z]{3}$"), name="payment_currency_iso"),
            models.CheckConstraint(condition=Q(payment_option__in=PaymentOption.values), name="payment_option_valid"),
            models.CheckConstraint(condition=Q(refunded=False) | Q(success=True), name="payment_refund_needs_success"),
        ]
        indexes = [
            models.Index(fields=["organizer", "id"], name="payment_organizer_order"),
            models.Index(fields=["success"], name="payment_success"),
            models.Index(fields=["refunded"], name="payment_refunded"),
            models.Index(fields=["currency"], name="payment_currency"),
            models.Index(fields=["payment_option"], name="payment_option"),
            models.Index(fields=["created_at"], name="payment_created_at"),
            # Exact and prefix lookups of a charge id (the back office's search).
            models.Index(fields=["external_id"], name="payment_external_id_prefix", opclasses=["varchar_pattern_ops"]),
        ]

    def __str__(self):
        return self.uid
