"""Which bookings a caller may see, as Cal.com v1 decided it for a single booking: those they
organise, those of event types they own, those of teams where they are an accepted ADMIN or OWNER,
those they attend (an attendee with their email address, or a host of a team booking); system
admins see all. The list, the
detail view, every change (edit, confirm or reject, reschedule, cancel) and `rescheduleUid` read
this one rule, so whoever receives a booking's webhook events (the organizer's, the event type's
and the team's webhooks, `webhooks.selectors.booking_webhooks`) may also open the booking."""

import functools
from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.db import DEFAULT_DB_ALIAS
from django.db.models import BigIntegerField, Exists, OuterRef, Prefetch, Q, QuerySet

from accounts.models import Membership, MembershipRole, User
from core.compiled_queries import AnyOf, IdArray, Parameter
from scheduling.models import Attendee, Booking, BookingHost


def booking_list(
    *,
    user: User,
    user_ids: list[int] | None = None,
    statuses: list[str] | None = None,
    event_type_ids: list[int] | None = None,
    after_start_time: datetime | None = None,
    before_end_time: datetime | None = None,
    attendee_emails: tuple[str, ...] = (),
    recurring_event_id: str | None = None,
    order_by: tuple[str, ...] = ("id",),
) -> QuerySet[Booking]:
    """The bookings the caller may see (`booking_visibility`), or for system admins everyone's
    (narrowed by `user_ids`, organizers' ids), with what `BookingSerializer` shows: for the writes
    and the bodies they answer with, and for GETs read as rows (core.readpath).

    `after_start_time` keeps bookings starting at or after it; `before_end_time` those ending at
    or before it; `attendee_emails` those with an attendee of one of these addresses;
    `recurring_event_id` the occurrences of one recurring series.
    """
    queryset = Booking.objects.select_related("organizer", "event_type", "rescheduled_from").prefetch_related(
        Prefetch("attendees", queryset=Attendee.objects.order_by("id"))
    )
    if user_ids is not None:
        queryset = queryset.filter(organizer_id__in=user_ids)
    if not user.is_system_admin:
        queryset = queryset.filter(booking_visibility(user))
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    if event_type_ids:
        queryset = queryset.filter(event_type_id__in=event_type_ids)
    if after_start_time is not None:
        queryset = queryset.filter(start_time__gte=after_start_time)
    if before_end_time is not None:
        queryset = queryset.filter(end_time__lte=before_end_time)
    if recurring_event_id is not None:
        queryset = queryset.filter(recurring_event_id=recurring_event_id)
    if attendee_emails:
        # EXISTS rather than a join: a booking with two matching attendees is still one row.
        matching = Attendee.objects.filter(booking_id=OuterRef("pk"), email__in=attendee_emails)
        queryset = queryset.filter(Exists(matching))
    return queryset.order_by(*order_by)


def booking_visibility(user: User) -> Q:
    """The bookings `user` (not a system admin) may see and act on; `booking_manages` narrows it
    to those they may decide on.

    One union of four indexed lookups (organizer, event type owner, the event types of teams they
    run, attendee email) rather than one OR of them: PostgreSQL cannot use an index for an OR of
    subqueries and scanned every booking (200,000 bookings: 570 ms for the count, 1.5 s for the
    first page, against 25 ms and 106 ms for the union). The union's ids are gathered into one
    array first and the bookings read by primary key from it (`id = ANY(ARRAY(…))`), so the plan
    starts from the caller's rows however many bookings the planner guesses the union holds: with
    `id IN (…)`, one bad guess (ten million for an organizer's 2,206) made it merge-join every
    booking's key (10^7 bookings: 413 ms for the count; 2.4 ms when the plan starts from the
    caller's ids). Estimates wrong about a branch's own column can still make that branch scan:
    the planner needs the statistics autovacuum keeps (docs/benchmarks.md, "Cost versus data
    size")."""
    sql, params = _visible_ids()
    values = {"user_id": user.pk, "email": user.email}
    ids = IdArray(sql, [values[p.name] if isinstance(p, Parameter) else p for p in params], _ID_ARRAY)
    return Q(AnyOf("pk", ids))


_ID_ARRAY = ArrayField(BigIntegerField())


@functools.cache
def _visible_ids() -> tuple[str, tuple]:
    """The union of `booking_visibility` as SQL, built and compiled by the ORM once per process with
    a `Parameter` for the user's id and e-mail: building that union cost more CPU than PostgreSQL
    takes to answer it, on every list, get and write of a booking (docs/benchmarks.md)."""
    user = Parameter("user_id", User._meta.pk)
    ids = (
        Booking.objects.filter(organizer_id=user)
        .values("pk")
        .order_by()
        .union(
            Booking.objects.filter(event_type__owner_id=user).values("pk").order_by(),
            Booking.objects.filter(event_type__team_id__in=_teams_run_by(user)).values("pk").order_by(),
            Attendee.objects.filter(email=Parameter("email", User._meta.get_field("email")))
            .values("booking_id")
            .order_by(),
            # Team bookings they attend as a host without organizing them.
            BookingHost.objects.filter(user_id=user).values("booking_id").order_by(),
        )
    )
    sql, params = ids.query.get_compiler(DEFAULT_DB_ALIAS).as_sql()
    return sql, tuple(params)


def _teams_run_by(user: User | Parameter) -> QuerySet:
    return Membership.objects.filter(
        user=user, accepted=True, role__in=(MembershipRole.ADMIN, MembershipRole.OWNER)
    ).values("team_id")


def booking_manages(user: User) -> Q:
    """The bookings `user` may confirm or reject: their own as organizer, those of their event
    types and those of teams they run (accepted ADMIN or OWNER). An attendee may see, edit and
    cancel a booking as in Cal.com v1, but not accept their own request."""
    return Q(organizer=user) | Q(event_type__owner=user) | Q(event_type__team_id__in=_teams_run_by(user))


def booking_is_managed_by(*, booking_id: int, user: User) -> bool:
    return Booking.objects.filter(booking_manages(user), pk=booking_id).exists()


def booking_by_uid(*, user: User, uid: str) -> Booking | None:
    """The caller's booking with this uid (as `booking_list` sees it), or None."""
    return booking_list(user=user).filter(uid=uid).first()


def payment_summaries(payments) -> list[dict]:
    """Payments (oldest first) as Cal.com v1's booking answer embedded them: `{id, uid, success,
    paymentOption}` rows."""
    return [
        {"id": payment.pk, "uid": payment.uid, "success": payment.success, "paymentOption": payment.payment_option}
        for payment in payments
    ]


def booking_for_update(*, booking_id: int) -> Booking:
    """The booking row locked for a lifecycle change, with what its payload needs."""
    return (
        Booking.objects.select_for_update(of=("self",))
        .select_related("organizer", "event_type", "rescheduled_from")
        .get(pk=booking_id)
    )
