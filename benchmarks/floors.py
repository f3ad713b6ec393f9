"""Framework floors (docs/benchmarks.md): the fastest this Django, on this machine, answers each request.

- `static`: a bare view returning a small constant JSON (`F_static`): routing, middleware and
  the WSGI server, nothing else.
- `db_*`: for each endpoint a bare view (`F_db`) that runs the endpoint's SQL — the credential and
  user in one query, then the same tables, filters (the bookings' visibility rule included), order
  and page size — as `.values()` rows,
  selecting only the columns the response shows, and dumps them with orjson. No DRF, no
  serializers, no rate limit, no envelope beyond what orjson writes. Write floors insert the same
  rows with `bulk_create` (no validation) in one transaction.

These views are mounted only by `benchmarks.urls` (settings `config.settings_bench`); they are
never part of the production URLs.
"""

import hashlib
import uuid
from datetime import UTC, datetime, time, timedelta

import orjson
from django.db import transaction
from django.db.models import Q
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.models import ApiKey, Membership
from payments.models import Payment
from scheduling.models import Attendee, Availability, Booking, BookingStatus, EventType, Schedule
from webhooks.models import Webhook, WebhookDelivery, WebhookScheduledTrigger

USER_COMPACT = ("id", "username", "name", "email", "time_zone")
ME_FIELDS = (
    "id",
    "username",
    "name",
    "email",
    "email_verified",
    "bio",
    "avatar",
    "time_zone",
    "week_start",
    "end_time",
    "buffer_time",
    "app_theme",
    "theme",
    "default_schedule_id",
    "locale",
    "time_format",
    "hide_branding",
    "brand_color",
    "dark_brand_color",
    "allow_dynamic_booking",
    "date_joined",
    "verified",
    "invited_to",
    "role",
)
KEY_FIELDS = ("id", "revoked_at", "expires_at", "last_used_at")
CALLER_FIELDS = ("id", "is_active", "role", "default_schedule_id", "username", "name", "email", "time_zone")


def _json(body, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), content_type="application/json", status=status)


def _caller(request, user_fields=CALLER_FIELDS) -> dict | None:
    """The API key and its user in one query, as the endpoints authenticate."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    raw_key = header.partition(" ")[2].strip()
    hashed = hashlib.sha256(raw_key.encode()).hexdigest()
    return (
        ApiKey.objects.filter(hashed_key=hashed)
        .values(*KEY_FIELDS, *(f"user__{field}" for field in user_fields))
        .first()
    )


def _take(request, default: int = 100) -> int:
    return int(request.GET.get("take", default))


def static(request):
    return _json({"status": "ok"})


def db_me(request):
    return _json({"user": _caller(request, ME_FIELDS)})


def _schedule_rows(schedules: list[dict]) -> dict:
    ids = [schedule["id"] for schedule in schedules]
    return {
        "availability": list(
            Availability.objects.filter(schedule_id__in=ids)
            .order_by("id")
            .values("id", "schedule_id", "days_mask", "start_time", "end_time", "date")
        ),
        "eventTypes": list(
            EventType.objects.filter(schedule_id__in=ids)
            .order_by("id")
            .values("id", "title", "slug", "length", "schedule_id")
        ),
    }


SCHEDULE_FIELDS = ("id", "user_id", "name", "time_zone", *(f"user__{field}" for field in USER_COMPACT))


def db_schedules(request):
    caller = _caller(request)
    queryset = Schedule.objects.filter(user_id=caller["user__id"])
    total = queryset.count()
    schedules = list(queryset.order_by("id").values(*SCHEDULE_FIELDS)[: _take(request)])
    return _json({"schedules": schedules, **_schedule_rows(schedules), "total": total})


def db_schedule(request, pk: int):
    caller = _caller(request)
    schedules = list(Schedule.objects.filter(user_id=caller["user__id"], pk=pk).values(*SCHEDULE_FIELDS)[:1])
    return _json({"schedule": schedules[0], **_schedule_rows(schedules)})


BOOKING_FIELDS = (
    "id",
    "uid",
    "organizer_id",
    "event_type_id",
    "title",
    "description",
    "start_time",
    "end_time",
    "status",
    "location",
    "metadata",
    "cancellation_reason",
    "created_at",
    "updated_at",
    *(f"organizer__{field}" for field in USER_COMPACT),
    "event_type__title",
    "event_type__slug",
    "event_type__length",
)


def _visible_bookings(caller: dict) -> Q:
    """The endpoint's visibility rule as its SQL has it: one `id IN (… UNION …)` of the bookings the
    caller organises, those of event types they own, those of the teams they run and those they
    attend (scheduling.selectors.bookings.booking_visibility, written here with bare querysets)."""
    user_id, email = caller["user__id"], caller["user__email"]
    teams_run = Membership.objects.filter(user_id=user_id, accepted=True, role__in=("ADMIN", "OWNER")).values("team_id")
    ids = (
        Booking.objects.filter(organizer_id=user_id)
        .values("pk")
        .order_by()
        .union(
            Booking.objects.filter(event_type__owner_id=user_id).values("pk").order_by(),
            Booking.objects.filter(event_type__team_id__in=teams_run).values("pk").order_by(),
            Attendee.objects.filter(email=email).values("booking_id").order_by(),
        )
    )
    return Q(pk__in=ids)


def db_bookings(request):
    caller = _caller(request)
    queryset = Booking.objects.filter(_visible_bookings(caller))
    total = queryset.count()
    bookings = list(queryset.order_by("id").values(*BOOKING_FIELDS)[: _take(request)])
    attendees = list(
        Attendee.objects.filter(booking_id__in=[booking["id"] for booking in bookings])
        .order_by("id")
        .values("id", "booking_id", "name", "email", "time_zone")
    )
    return _json({"bookings": bookings, "attendees": attendees, "total": total})


def db_memberships(request):
    caller = _caller(request)
    member_of = Membership.objects.filter(user_id=caller["user__id"], accepted=True).values("team_id")
    queryset = Membership.objects.filter(Q(team_id__in=member_of) | Q(user_id=caller["user__id"]))
    queryset = queryset.filter(team_id=int(request.GET["teamId"]))
    total = queryset.count()
    memberships = list(
        queryset.order_by("id").values(
            "id",
            "user_id",
            "team_id",
            "accepted",
            "role",
            "disable_impersonation",
            "team__name",
            "team__slug",
            *(f"user__{field}" for field in USER_COMPACT),
        )[: _take(request)]
    )
    return _json({"memberships": memberships, "total": total})


def db_payments(request):
    caller = _caller(request)
    queryset = Payment.objects.filter(booking__organizer_id=caller["user__id"])
    total = queryset.count()
    payments = list(
        queryset.order_by("id").values(
            "id",
            "uid",
            "app_id",
            "app__name",
            "booking_id",
            "booking__uid",
            "booking__title",
            "booking__start_time",
            "booking__end_time",
            "booking__status",
            "amount",
            "fee",
            "currency",
            "success",
            "refunded",
            "data",
            "external_id",
            "payment_option",
        )[: _take(request)]
    )
    return _json({"payments": payments, "total": total})


EVENT_TYPE_SLOT_FIELDS = (
    "id",
    "owner_id",
    "schedule_id",
    "length",
    "slot_interval",
    "minimum_booking_notice",
    "before_event_buffer",
    "after_event_buffer",
    "schedule__time_zone",
)


def _slot_rows(caller: dict, event_type_id: int, start: datetime, end: datetime) -> dict:
    """The three reads of a slot computation: the bookable event type, its rules, the busy time."""
    member_of = Membership.objects.filter(user_id=caller["user__id"], accepted=True).values("team_id")
    event_type = (
        EventType.objects.filter(Q(owner_id=caller["user__id"]) | Q(team_id__in=member_of) | Q(hidden=False))
        .filter(pk=event_type_id)
        .values(*EVENT_TYPE_SLOT_FIELDS)
        .first()
    )
    margin = timedelta(days=1, minutes=event_type["length"])
    rules = list(
        Availability.objects.filter(schedule_id=event_type["schedule_id"])
        .exclude(date__lt=(start - margin).date())
        .exclude(date__gt=(end + margin).date())
        .order_by("id")
        .values("days_mask", "start_time", "end_time", "date")
    )
    busy = list(
        Booking.objects.filter(
            organizer_id=event_type["owner_id"],
            status__in=(BookingStatus.ACCEPTED, BookingStatus.PENDING),
            start_time__lt=end + margin,
            end_time__gt=start - margin,
        ).values_list("start_time", "end_time", "event_type__before_event_buffer", "event_type__after_event_buffer")
    )
    return {"eventType": event_type, "rules": rules, "busy": busy}


def _day(value: str, *, end: bool = False) -> datetime:
    day = datetime.fromisoformat(value).date()
    return datetime.combine(day + timedelta(days=1) if end else day, time(0), tzinfo=UTC)


def db_slots(request):
    caller = _caller(request)
    start, end = _day(request.GET["startTime"]), _day(request.GET["endTime"], end=True)
    return _json(_slot_rows(caller, int(request.GET["eventTypeId"]), start, end))


@csrf_exempt
def db_schedule_create(request):
    body = orjson.loads(request.body)
    caller = _caller(request)
    with transaction.atomic():
        schedule = Schedule.objects.create(user_id=caller["user__id"], name=body["name"], time_zone=body["timeZone"])
        Availability.objects.bulk_create(
            [
                Availability(
                    schedule=schedule,
                    days_mask=Availability.mask_for([1, 2, 3, 4, 5]),
                    start_time=time(9),
                    end_time=time(17),
                )
            ]
        )
    return _json({"schedule": {"id": schedule.pk}}, status=200)


@csrf_exempt
def db_booking_create(request):
    """The booking's reads (as in GET /slots for one instant) and its writes: booking, attendee,
    one outbox row per subscribed webhook, the scheduled MEETING_* rows."""
    body = orjson.loads(request.body)
    caller = _caller(request)
    start = datetime.fromisoformat(body["start"])
    with transaction.atomic():
        rows = _slot_rows(caller, int(body["eventTypeId"]), start, start + timedelta(minutes=1))
        event_type = rows["eventType"]
        booking = Booking.objects.create(
            organizer_id=event_type["owner_id"],
            event_type_id=event_type["id"],
            title="Bench booking",
            start_time=start,
            end_time=start + timedelta(minutes=event_type["length"]),
            status=BookingStatus.ACCEPTED,
        )
        Attendee.objects.bulk_create(
            [Attendee(booking=booking, name=body["name"], email=body["email"], time_zone=body["timeZone"])]
        )
        webhooks = list(
            Webhook.objects.filter(user_id=event_type["owner_id"], active=True).values("id", "event_triggers")
        )
        now = datetime.now(UTC)
        payload = {"bookingId": booking.pk, "uid": booking.uid, "startTime": body["start"]}
        WebhookDelivery.objects.bulk_create(
            WebhookDelivery(
                webhook_id=webhook["id"],
                trigger_event="BOOKING_CREATED",
                payload=payload,
                event_created_at=now,
                message_id=f"msg_{uuid.uuid4().hex}",
                next_attempt_at=now,
            )
            for webhook in webhooks
            if "BOOKING_CREATED" in webhook["event_triggers"]
        )
        WebhookScheduledTrigger.objects.bulk_create(
            WebhookScheduledTrigger(
                webhook_id=webhook["id"],
                booking=booking,
                trigger_event=trigger,
                start_after=booking.start_time if trigger == "MEETING_STARTED" else booking.end_time,
            )
            for webhook in webhooks
            for trigger in ("MEETING_STARTED", "MEETING_ENDED")
            if trigger in webhook["event_triggers"]
        )
    return _json({"id": booking.pk, "uid": booking.uid}, status=200)
