"""Which bookings a caller may see, as Cal.com v1 decided it for a single booking: those they
organise, those of event types they own, those of teams where they are an accepted ADMIN or OWNER,
those they attend (an attendee with their email address, or a host of a team booking); system
admins see all. The list, the
detail view, every change (edit, confirm or reject, reschedule, cancel) and `rescheduleUid` read
this one rule, so whoever receives a booking's webhook events (the organizer's, the event type's
and the team's webhooks, `webhooks.selectors.booking_webhooks`) may also open the booking."""

import functools
from datetime import datetime, timedelta

from django.contrib.postgres.fields import ArrayField
from django.db.models import BigIntegerField, EmailField, Exists, OuterRef, Prefetch, Q, QuerySet

from accounts.models import Membership, MembershipRole, User
from core.fastpath.branches import AnyBranch, Branch, Each, Template, one_of
from core.fastpath.compiled_queries import CompiledValues, Parameter
from scheduling.models import Attendee, Booking, BookingHost, EventType


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
    and the bodies they answer with, and for GETs read as rows (core.fastpath).

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
        # An attendee's address or a series holds few rows whatever the caller's size: the rule
        # need not read each event type apart for them.
        # Nor a window of at most NARROW_WINDOW between a start and an end.
        window = after_start_time is not None and before_end_time is not None
        narrow = bool(attendee_emails) or recurring_event_id is not None
        narrow = narrow or (window and before_end_time - after_start_time <= NARROW_WINDOW)
        queryset = queryset.filter(booking_visibility(user, narrow=narrow))
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    if event_type_ids:
        queryset = queryset.filter(event_type_id__in=event_type_ids)
    # Each bound also bounds the other column (a booking ends after it starts): PostgreSQL estimates
    # two columns' conditions as independent, and took a one-day window of a million bookings for
    # a fifth of them, so it walked the list's order past every other row (1.4 s). On one column the
    # window's estimate is right, and its index reads the window alone.
    if after_start_time is not None:
        queryset = queryset.filter(start_time__gte=after_start_time, end_time__gt=after_start_time)
    if before_end_time is not None:
        queryset = queryset.filter(end_time__lte=before_end_time, start_time__lt=before_end_time)
    if recurring_event_id is not None:
        queryset = queryset.filter(recurring_event_id=recurring_event_id)
    if attendee_emails:
        # EXISTS rather than a join: a booking with two matching attendees is still one row.
        matching = Attendee.objects.filter(booking_id=OuterRef("pk"), email__in=attendee_emails)
        queryset = queryset.filter(Exists(matching))
    return queryset.order_by(*order_by)


# A window between a start and an end this long holds few of a caller's bookings: read from the
# start-time indexes, not along each event type's order.
NARROW_WINDOW = timedelta(days=31)


def booking_visibility(user: User, *, narrow: bool = False) -> AnyBranch:
    """The bookings `user` (not a system admin) may see and act on; `booking_manages` narrows it
    to those they may decide on.

    Branches read apart (core.fastpath.branches): the bookings they organise (read first, they
    bound the others), those of each event type they own or whose team they run (one lateral
    branch over their ids), and those whose attendees have their address. Each branch repeats the
    list's filters, order and end, and reads an index in the list's order (the organizer's and the
    event type's indexes of each order a list offers, `Booking.Meta.indexes`; the primary key), so
    a page reads its rows and stops, for an organizer of a million bookings as for one of a
    thousand; the page is the first rows of the branches' union. An OR of the branches let
    PostgreSQL choose one plan for all of them: a scan of the list's order that skipped every
    other caller's rows when a busy organizer's were not spread through it (60,000 rows read
    for a page), or every visible id gathered first (a million for that organizer: 2.4 s)."""
    event_type_ids = _event_types_run_by(user)
    # The statement is the same for every caller with or without event types they run, and for
    # `narrow` lists: compiled once for each (core.fastpath.branches.Template).
    return AnyBranch.of(
        Template(
            key=("bookings.visibility", bool(event_type_ids), narrow),
            build=functools.partial(
                _visibility_branches, event_types=bool(event_type_ids), each=bool(event_type_ids) and not narrow
            ),
            values={"user": [user.pk], "user_id": user.pk, "email": user.email, "event_types": event_type_ids},
            fields=_VISIBILITY_FIELDS,
        )
    )


_VISIBILITY_FIELDS = {
    "user": ArrayField(BigIntegerField()),
    "user_id": BigIntegerField(),
    "email": EmailField(),
    "event_types": ArrayField(BigIntegerField()),
}


def _visibility_branches(values: dict, *, event_types: bool, each: bool) -> tuple[list, list]:
    """`booking_visibility`'s branches for these values (or their `Parameter`s), and the same rule
    unordered (a COUNT, whose branches need not follow an index in an order)."""
    key = BigIntegerField()
    organised = Branch(one_of("organizer_id", values["user"], key), along="organizer_id")
    attended = Q(pk__in=Attendee.objects.filter(email=values["email"]).values("booking_id"))
    # Team bookings they attend as a host without organizing them.
    hosted = Q(pk__in=BookingHost.objects.filter(user_id=values["user_id"]).values("booking_id"))
    of_event_types = [one_of("event_type_id", values["event_types"], key)] if event_types else []
    # A COUNT (no order), or a list whose other filters are `narrow` (they select few rows of the
    # table), needs no branch per event type: one of them all stops at its bound as well.
    # Read first, the bookings they organise bound the other branches (core.fastpath.branches).
    per_event_type = [Each("event_type_id", values["event_types"], key)] if each else of_event_types
    unordered = [one_of("organizer_id", values["user"], key), *of_event_types, attended, hosted]
    return [organised, *per_event_type, attended, hosted], unordered


def _event_types_run_by(user: User) -> list[int]:
    """The ids of the event types whose bookings `user` sees as their owner or their team's
    ADMIN or OWNER: each kind read along its own index and united (an OR of the two walked every
    event type of the installation: 12 ms among 50,000, on every request that reads a booking)."""
    return sorted(row[0] for row in _event_types_run_by_statement().rows(user_id=user.pk))


@functools.cache
def _event_types_run_by_statement() -> CompiledValues:
    """`_event_types_run_by`'s union, compiled once (core.fastpath.compiled_queries)."""
    user_id = Parameter("user_id", BigIntegerField())
    owned = EventType.objects.filter(owner_id=user_id).order_by().values_list("pk")
    teams = Membership.objects.filter(
        user_id=user_id, accepted=True, role__in=(MembershipRole.ADMIN, MembershipRole.OWNER)
    ).values("team_id")
    of_teams = EventType.objects.filter(team_id__in=teams).order_by().values_list("pk")
    return CompiledValues(owned.union(of_teams))


def _teams_run_by(user: User) -> QuerySet:
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
