"""v2's reads: Cal.com v2's filters narrowing this service's selectors, which keep deciding who
sees what (`scheduling.selectors.bookings.booking_list`, `webhooks.selectors.webhook_list`, …)."""

from datetime import datetime

from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from accounts.models import User
from scheduling.models import Attendee, Booking, BookingHost, BookingStatus
from scheduling.selectors.bookings import booking_list
from webhooks.models import Webhook
from webhooks.selectors import webhook_list

ACTIVE = (BookingStatus.ACCEPTED, BookingStatus.PENDING)


def _status_filter(status: str, now: datetime) -> Q:
    """Cal.com v2's booking statuses of a list filter (they are views, not stored states)."""
    if status == "upcoming":
        return Q(end_time__gte=now, status__in=ACTIVE)
    if status == "past":
        return Q(end_time__lte=now, status__in=ACTIVE)
    if status == "cancelled":
        return Q(status__in=(BookingStatus.CANCELLED, BookingStatus.REJECTED))
    if status == "unconfirmed":
        return Q(end_time__gte=now, status=BookingStatus.PENDING)
    # "recurring": the upcoming occurrences of series, as Cal.com's filter.
    return Q(end_time__gte=now, status__in=ACTIVE) & ~Q(recurring_event_id="")


def bookings_v2(
    *,
    user: User,
    now: datetime | None = None,
    statuses: list[str] = (),
    attendee_email: str | None = None,
    attendee_name: str | None = None,
    event_type_ids: list[int] = (),
    team_ids: list[int] = (),
    after_start: datetime | None = None,
    before_end: datetime | None = None,
    after_created_at: datetime | None = None,
    before_created_at: datetime | None = None,
    after_updated_at: datetime | None = None,
    before_updated_at: datetime | None = None,
    order_by: tuple[str, ...] = ("start_time", "id"),
) -> QuerySet[Booking]:
    """The caller's bookings (`booking_list`'s visibility) with what `shapes.booking_2024_08_13`
    reads: the successor of a rescheduled booking comes in the same prefetch round."""
    queryset = booking_list(
        user=user,
        event_type_ids=list(event_type_ids) or None,
        after_start_time=after_start,
        before_end_time=before_end,
        attendee_emails=(attendee_email,) if attendee_email else (),
        order_by=order_by,
    ).prefetch_related(
        Prefetch("rescheduled_to", queryset=Booking.objects.order_by("id").only("id", "uid", "rescheduled_from")),
        Prefetch("team_hosts", queryset=BookingHost.objects.select_related("user").order_by("id")),
    )
    if statuses:
        condition = Q()
        for status in statuses:
            condition |= _status_filter(status, now)
        queryset = queryset.filter(condition)
    if attendee_name:
        named = Attendee.objects.filter(booking_id=OuterRef("pk"), name__iexact=attendee_name)
        queryset = queryset.filter(Exists(named))
    if team_ids:
        queryset = queryset.filter(event_type__team_id__in=team_ids)
    for lookup, value in (
        ("created_at__gte", after_created_at),
        ("created_at__lte", before_created_at),
        ("updated_at__gte", after_updated_at),
        ("updated_at__lte", before_updated_at),
    ):
        if value is not None:
            queryset = queryset.filter(**{lookup: value})
    return queryset


def booking_v2_by_uid(*, user: User, uid: str) -> Booking | None:
    return bookings_v2(user=user).filter(uid=uid).first()


def webhooks_of_user(*, user: User) -> QuerySet[Webhook]:
    """GET /v2/webhooks: the caller's own webhooks (not their event types' or teams'), as Cal.com's
    user webhooks are; oldest first."""
    return (
        webhook_list(user=user)
        .filter(user=user, team__isnull=True, event_type__isnull=True)
        .order_by("created_at", "id")
    )


def webhooks_of_event_type(*, user: User, event_type_id: int) -> QuerySet[Webhook]:
    return webhook_list(user=user).filter(event_type_id=event_type_id).order_by("created_at", "id")
