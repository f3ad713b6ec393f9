from rest_framework import serializers

from core.serializers import ApiSerializer, CompactAppSerializer, CompactBookingSerializer
from payments.models import PaymentOption


class PaymentSerializer(ApiSerializer):
    """Read-only: payments are written by the payment apps, never over this API."""

    id = serializers.IntegerField(read_only=True)
    uid = serializers.CharField(read_only=True)
    app_id = serializers.CharField(read_only=True, allow_null=True)
    app = CompactAppSerializer(read_only=True, allow_null=True)
    booking_id = serializers.IntegerField(read_only=True)
    booking = CompactBookingSerializer(read_only=True)
    amount = serializers.IntegerField(read_only=True, help_text="Minor units (cents).")
    fee = serializers.IntegerField(read_only=True, help_text="Minor units (cents).")
    currency = serializers.CharField(read_only=True, help_text="ISO 4217, lower case.")
    success = serializers.BooleanField(read_only=True)
    refunded = serializers.BooleanField(read_only=True)
    data = serializers.JSONField(read_only=True)
    external_id = serializers.CharField(read_only=True)
    payment_option = serializers.ChoiceField(choices=PaymentOption.choices, read_only=True)
