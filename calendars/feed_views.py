"""The doors of a user's calendar feed (calendars.feeds): the feed itself, read by calendar apps
without credentials at its secret address (`/v1/calendar-feeds/{variant}/{token}.ics`), and
`/v1/calendar-feeds/{variant}` to see, make, rotate and revoke that address (this service's
extension)."""

from django.http import HttpResponse
from django.utils.http import http_date, parse_etags
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, OpenApiTypes, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from calendars.feeds import (
    FEED_PATH,
    feed_by_token,
    feed_entries,
    feed_etag,
    feed_issue,
    feed_of,
    feed_revoke,
    render_feed,
)
from calendars.models import FeedVariant
from core.exceptions import NotFound
from core.scopes import READ_CALENDAR, WRITE_CALENDAR
from core.serializers import ApiSerializer
from core.views import api_not_found
from core.viewsets import ResourceAPIView

VARIANT_PARAMETER = OpenApiParameter(
    "variant",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    enum=FeedVariant.values,
    description="`full`: every detail of each booking; `busy`: only its time, as Busy.",
)


class CalendarFeedReadView(APIView):
    """GET /v1/calendar-feeds/{variant}/{token}.ics: what a calendar app subscribes to. No
    credential: the secret address is the credential."""

    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = ()
    http_method_names = ["get", "head"]

    @extend_schema(
        parameters=[
            VARIANT_PARAMETER,
            OpenApiParameter("token", OpenApiTypes.STR, OpenApiParameter.PATH, description="The feed's secret."),
            OpenApiParameter(
                "If-None-Match", OpenApiTypes.STR, OpenApiParameter.HEADER, description="The ETag of an earlier answer."
            ),
        ],
        responses={
            (200, "text/calendar"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description="The feed (iCalendar). `ETag` and `Last-Modified` come with it; "
                "`X-Feed-Truncated: true` when the limits left bookings out.",
            ),
            304: OpenApiResponse(description="Unchanged since the ETag sent in `If-None-Match`."),
        },
        operation_id="calendar_feeds_read",
        auth=[],
    )
    def get(self, request, variant: str, token: str):
        """The bookings you organise or host, 90 days back to a year ahead, as iCalendar (the
        `busy` variant: only their times). A token that is not a live feed's, or of another
        variant, is the 404 of an unknown path. Conditional on `If-None-Match`."""
        feed = feed_by_token(token)
        if feed is None or feed.variant != variant:
            return api_not_found(request._request)
        entries, truncated = feed_entries(feed)
        body = render_feed(feed, entries)
        etag = feed_etag(body)
        # The busy feed's time is the newest booking's creation: a change it does not show (a new
        # title) must not show in its headers either.
        shown = "created_at" if variant == "busy" else "updated_at"
        changed = max((getattr(entry, shown) for entry in entries), default=feed.created_at)
        headers = {
            "ETag": etag,
            "Last-Modified": http_date(max(changed, feed.created_at).timestamp()),
            # Personal data at a secret address: no shared cache keeps it, each use revalidates.
            "Cache-Control": "private, no-cache",
            "Referrer-Policy": "no-referrer",
            "X-Robots-Tag": "noindex",
        }
        if truncated:
            headers["X-Feed-Truncated"] = "true"
        wanted = parse_etags(request.headers.get("If-None-Match", ""))
        if "*" in wanted or etag in wanted:
            unchanged = HttpResponse(status=304, headers=headers)
            del unchanged["Content-Type"]
            return unchanged
        response = HttpResponse(body, content_type="text/calendar; charset=utf-8", headers=headers)
        response["Content-Disposition"] = f'inline; filename="{variant}.ics"'
        return response


class CalendarFeedSerializer(ApiSerializer):
    variant = serializers.ChoiceField(choices=FeedVariant.values, read_only=True)
    created_at = serializers.DateTimeField(read_only=True, help_text="When this address was made (or last rotated).")
    url = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="The secret address to subscribe to: only in the answer that made it; null otherwise.",
    )


FEED_ENVELOPE = inline_serializer("CalendarFeedEnvelope", {"calendar_feed": CalendarFeedSerializer()})
FEED_CREATED = inline_serializer(
    "CalendarFeedCreated", {"calendar_feed": CalendarFeedSerializer(), "message": serializers.CharField()}
)
FEED_REVOKED = inline_serializer("CalendarFeedRevoked", {"message": serializers.CharField()})


def _shown(feed, url: str | None = None) -> dict:
    return CalendarFeedSerializer({"variant": feed.variant, "created_at": feed.created_at, "url": url}).data


def _existing(user, variant: str):
    feed = feed_of(user, variant)
    if feed is None:
        raise NotFound(f"The {variant} calendar feed does not exist.")
    return feed


class CalendarFeedView(ResourceAPIView):
    """The caller's calendar feed of one variant (this service's extension; docs/calendars.md,
    "Your bookings as a feed")."""

    scopes = {"GET": READ_CALENDAR, "POST": WRITE_CALENDAR, "DELETE": WRITE_CALENDAR}

    @extend_schema(
        parameters=[VARIANT_PARAMETER],
        responses={200: FEED_ENVELOPE},
        operation_id="calendar_feeds_retrieve",
    )
    def get(self, request, variant: str):
        """Whether the feed exists and since when; its address is never shown again (`url` null)."""
        return Response({"calendar_feed": _shown(_existing(request.user, variant))})

    @extend_schema(
        parameters=[VARIANT_PARAMETER],
        request=None,
        responses={200: FEED_CREATED},
        operation_id="calendar_feeds_create",
    )
    def post(self, request, variant: str):
        """Make the feed's secret address, or rotate it: the answer shows the new address once,
        and the previous one answers 404 from now on."""
        rotated = feed_of(request.user, variant) is not None
        feed, token = feed_issue(user=request.user, variant=variant)
        url = request.build_absolute_uri(FEED_PATH.format(variant=variant, token=token))
        message = f"Calendar feed {'rotated' if rotated else 'created'} successfully"
        return Response({"calendar_feed": _shown(feed, url), "message": message})

    @extend_schema(
        parameters=[VARIANT_PARAMETER],
        request=None,
        responses={200: FEED_REVOKED},
        operation_id="calendar_feeds_destroy",
    )
    def delete(self, request, variant: str):
        """Revoke the address: it answers 404 from now on."""
        feed_revoke(user=request.user, variant=variant)
        return Response({"message": f"Calendar feed {variant} revoked successfully"})
