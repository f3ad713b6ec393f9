from rest_framework import serializers

from core.serializers import ApiSerializer
from webhooks.models import WebhookTrigger
from webhooks.serializers import SubscriberUrlField


class AppSubscriptionSerializer(ApiSerializer):
    """The REST-hook subscribe body of Make and Zapier: one trigger per subscription."""

    subscriber_url = SubscriberUrlField()
    trigger_event = serializers.ChoiceField(choices=WebhookTrigger.choices)


class AppUserSerializer(ApiSerializer):
    username = serializers.CharField(read_only=True, allow_null=True)


class AppPersonSerializer(ApiSerializer):
    name = serializers.CharField(allow_null=True)
    email = serializers.EmailField()
    time_zone = serializers.CharField()
    utc_offset = serializers.IntegerField(help_text="Minutes east of UTC at the booking's start.")


class AppOrganizerSerializer(AppPersonSerializer):
    username = serializers.CharField(allow_null=True)
    locale = serializers.CharField()


class AppEventTypeSerializer(ApiSerializer):
    title = serializers.CharField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    requires_confirmation = serializers.BooleanField()
    price = serializers.IntegerField()
    currency = serializers.CharField()
    length = serializers.IntegerField()


class AppBookingSerializer(ApiSerializer):
    """A booking as Cal.com's automation apps list it, and as Zapier subscriptions receive it
    (then with `createdAt`, the event's time)."""

    title = serializers.CharField()
    description = serializers.CharField(allow_blank=True, allow_null=True)
    custom_inputs = serializers.DictField()
    responses = serializers.DictField()
    user_fields_responses = serializers.DictField()
    start_time = serializers.CharField()
    end_time = serializers.CharField()
    location = serializers.CharField(allow_blank=True, allow_null=True)
    status = serializers.ChoiceField(choices=["ACCEPTED", "PENDING", "CANCELLED", "REJECTED"])
    cancellation_reason = serializers.CharField(allow_null=True)
    user = AppOrganizerSerializer()
    event_type = AppEventTypeSerializer()
    attendees = AppPersonSerializer(many=True)


class OutOfOfficeSampleSerializer(ApiSerializer):
    created_at = serializers.CharField()
    trigger_event = serializers.CharField(default="OOO_CREATED")
    payload = serializers.DictField(
        help_text="`{oooEntry: {id, uuid, start, end, createdAt, updatedAt, notes, reason, reasonId, user, toUser}}`."
    )
