"""The REST hooks of Cal.com's Make app and of a self-built (private) Zapier app, at the paths
those apps call on a Cal.com deployment (`/api/integrations/<app>/...`), with Cal.com's statuses:
Make answers its GETs with 201 and an empty booking list with a 404, Zapier its `me` with 200.

Both take the credential as every endpoint does (`?apiKey=`, or `Authorization: Bearer` with an
API key or an OAuth access token): Cal.com's Make app sends `?apiKey=`, a Zapier app built from
Cal.com's guide sends its OAuth token.
"""

import uuid

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.exceptions import NotFound
from core.scopes import READ_BOOKING, READ_PROFILE
from core.viewsets import ResourceAPIView
from integrations.bodies import MAKE
from integrations.selectors import out_of_office_samples, sample_bookings
from integrations.serializers import (
    AppBookingSerializer,
    AppSubscriptionSerializer,
    AppUserSerializer,
    OutOfOfficeSampleSerializer,
)
from integrations.services import app_subscription_create, app_subscription_delete
from webhooks.serializers import WebhookSerializer

TAGS = ["integrations"]


class AppView(ResourceAPIView):
    app_id = ""  # set per route: "make" or "zapier"
    query_refers_to_objects = True  # documented with a 404: the subscription, or Make's empty list


class AddSubscriptionView(AppView):
    scopes = {"POST": READ_BOOKING}

    @extend_schema(
        tags=TAGS,
        request=AppSubscriptionSerializer,
        responses={200: WebhookSerializer},
        description="Subscribe `subscriberUrl` to one trigger (a webhook of the caller marked with the app). "
        "Keep the answer's `id` to unsubscribe.",
    )
    def post(self, request, **kwargs):
        serializer = AppSubscriptionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = app_subscription_create(
            user=request.user,
            app_id=self.app_id,
            subscriber_url=serializer.validated_data["subscriber_url"],
            trigger_event=serializer.validated_data["trigger_event"],
        )
        return Response(WebhookSerializer(webhook).data)


class DeleteSubscriptionView(AppView):
    scopes = {"DELETE": READ_BOOKING}

    @extend_schema(
        tags=TAGS,
        parameters=[OpenApiParameter("id", str, required=True, description="The subscription's `id`.")],
        responses={204: OpenApiResponse(description="Unsubscribed.")},
    )
    def delete(self, request, **kwargs):
        subscription_id = request.query_params.get("id")
        if not subscription_id:
            raise ValidationError({"id": ["This query parameter is required."]})
        try:
            subscription_id = uuid.UUID(subscription_id)
        except ValueError:
            raise NotFound(f"Subscription {subscription_id[:40]} does not exist.") from None
        app_subscription_delete(user=request.user, app_id=self.app_id, subscription_id=subscription_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ListBookingsView(AppView):
    scopes = {"GET": READ_BOOKING}

    @extend_schema(
        tags=TAGS,
        responses={201: AppBookingSerializer(many=True)},
        description="The caller's three newest bookings, as the app's sample data (201, as Cal.com answers). "
        "Make: a 404 when there is none yet; Zapier: an empty list.",
    )
    def get(self, request, **kwargs):
        bookings = sample_bookings(user=request.user)
        if not bookings and self.app_id == MAKE:
            raise NotFound(
                "There are no bookings to retrieve, please create a booking first. "
                f"Requested: `userId: {request.user.pk}`"
            )
        return Response(bookings, status=status.HTTP_201_CREATED)


class MeView(AppView):
    scopes = {"GET": READ_PROFILE}

    @extend_schema(
        tags=TAGS,
        responses={200: AppUserSerializer, 201: AppUserSerializer},
        description="The caller's username (the app's connection test): 201 for Make, 200 for Zapier.",
    )
    def get(self, request, **kwargs):
        answer_status = status.HTTP_201_CREATED if self.app_id == MAKE else status.HTTP_200_OK
        return Response({"username": request.user.username}, status=answer_status)


class ListOutOfOfficeEntriesView(AppView):
    scopes = {"GET": READ_PROFILE}

    @extend_schema(
        tags=TAGS,
        responses={200: OutOfOfficeSampleSerializer(many=True)},
        description="The caller's three newest out-of-office entries, each as its OOO_CREATED delivery "
        "(`{createdAt, triggerEvent, payload: {oooEntry}}`).",
    )
    def get(self, request, **kwargs):
        return Response(out_of_office_samples(user=request.user))
