"""Who a booking of a team event type goes to, and who attends it beside the organizer.

- Collective: the organizer is the first host (lowest user id); every other host attends.
- Round robin: among the round-robin hosts free at the start, the highest `priority` wins; among
  those, the one furthest below their weighted share of this month's bookings of the event type
  (Cal.com's weights: `total × weight / total weight − own`; with equal weights, the least booked
  host), then the fewer bookings, then the lowest user id. Fixed hosts attend every booking.
- A reschedule keeps its organizer when they are free at the new time, else assigns again.

Two bookings racing for the same person take turns, whatever their kinds: every path that
writes or moves a booking (personal, series, collective, round robin, reschedule, reassign) first
takes the lock of each person the booking makes busy (PostgreSQL advisory locks held to the end of
the transaction, in user id order so that no two wait on each other: `lock_people`, or in the
statement that reads the schedules' rules, `lock=True` of the slot selectors), then reads who is
free, so the second sees the first's booking. The lock matters for the hosts who attend beside the
organizer (`BookingHost`): the exclusion constraint on the organizer stays the last word for
organizers, but no constraint spans the two tables.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from accounts.models import User
from core.datetimes import iso_utc
from core.exceptions import ApplicationError, Conflict
from core.fastpath.loaded import record_loaded
from payments.models import Payment
from scheduling.models import Booking, BookingHost, BookingStatus, EventType, SchedulingType
from scheduling.payloads import booking_payload
from scheduling.selectors.bookings import booking_for_update, booking_is_managed_by
from scheduling.selectors.hosts import TeamHost, is_team_hosted, team_hosts
from scheduling.selectors.slot_sources import LOCK_PEOPLE_SQL, PERSON_LOCK_SPACE, event_type_host
from scheduling.selectors.team_slots import team_slot_hosts
from webhooks.models import WebhookTrigger
from webhooks.outbox import create_deliveries
from webhooks.scheduled import schedule_meeting_triggers
from webhooks.selectors import booking_webhooks, subscribed_to


@dataclass(frozen=True)
class AssignedSlot:
    """`booking_host`'s finding for one booking being written: `start` is free for the assigned
    host (at `now`, with the booking `excluded` left out), and the hosts it read."""

    start: datetime
    now: datetime
    excluded: int | None
    hosts: list[TeamHost]


def lock_people(user_ids: list[int]) -> None:
    """Lock, to the end of the transaction, the people whose time a booking being written makes
    busy, before reading whether they are free: one statement (`LOCK_PEOPLE_SQL`)."""
    with connection.cursor() as cursor:
        cursor.execute(LOCK_PEOPLE_SQL, [PERSON_LOCK_SPACE, sorted(user_ids)])


def _month_start(now: datetime) -> datetime:
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def period_booking_counts(*, event_type: EventType, user_ids: list[int], now: datetime) -> dict[int, int]:
    """Each host's accepted or pending bookings of `event_type` made since the start of `now`'s
    month (UTC), the period Cal.com's round robin balances over by default."""
    counts = (
        Booking.objects.filter(
            event_type=event_type,
            organizer_id__in=user_ids,
            status__in=(BookingStatus.ACCEPTED, BookingStatus.PENDING),
            created_at__gte=_month_start(now),
        )
        .values("organizer_id")
        .annotate(count=Count("pk"))
        .order_by()
    )
    found = {row["organizer_id"]: row["count"] for row in counts}
    return {user_id: found.get(user_id, 0) for user_id in user_ids}


def round_robin_choice(*, rotating: list[TeamHost], free_ids: list[int], counts: dict[int, int]) -> int:
    """The user id the booking goes to (see the module's docstring). `rotating`: every round-robin
    host (their weights and counts make the shares), `free_ids`: those free at the start."""
    free = [host for host in rotating if host.user.pk in free_ids]
    top = max(host.priority for host in free)
    candidates = [host for host in free if host.priority == top]
    total = sum(counts[host.user.pk] for host in rotating)
    total_weight = sum(host.weight for host in rotating)

    def shortfall(host: TeamHost) -> int:
        # total × weight / total_weight − own, scaled by total_weight to stay in integers.
        return total * host.weight - counts[host.user.pk] * total_weight

    best = min(candidates, key=lambda host: (-shortfall(host), counts[host.user.pk], host.user.pk))
    return best.user.pk


def booking_host(
    *, event_type: EventType, start: datetime, now: datetime, previous: Booking | None = None
) -> User | None:
    """The organizer of a new booking of `event_type` at `start` (None: nobody can take it). A
    personal event type, or a team one without hosts, is its one host's (`event_type_host`)."""
    if not is_team_hosted(event_type):
        return event_type_host(event_type)  # locked by the slot check (`slot_is_offered`)
    hosts = team_hosts(event_type)
    if not hosts:
        return None
    excluded = previous.pk if previous is not None else None
    free_ids = team_slot_hosts(
        event_type=event_type, start=start, now=now, exclude_booking_id=excluded, hosts=hosts, lock=True
    )
    if not free_ids:
        return None
    # What the rest of this booking's write needs again (the slot check of `_book`, the attending
    # hosts), read under the hosts' locks: kept on this event type object for this write only.
    event_type._assigned = AssignedSlot(start=start, now=now, excluded=excluded, hosts=hosts)
    by_id = {host.user.pk: host.user for host in hosts}
    rotating = [host for host in hosts if not host.is_fixed]
    if event_type.scheduling_type == SchedulingType.COLLECTIVE or not rotating:
        return hosts[0].user
    if previous is not None and previous.organizer_id in free_ids:
        return by_id[previous.organizer_id]
    return by_id[_assigned_host(event_type=event_type, rotating=rotating, free_ids=free_ids, now=now)]


def _assigned_host(*, event_type: EventType, rotating: list[TeamHost], free_ids: list[int], now: datetime) -> int:
    """`round_robin_choice`, reading the period's counts only when two or more free hosts share the
    highest priority (one alone is the choice whatever the counts)."""
    free = [host for host in rotating if host.user.pk in free_ids]
    top = max(host.priority for host in free)
    candidates = [host for host in free if host.priority == top]
    if len(candidates) == 1:
        return candidates[0].user.pk
    counts = period_booking_counts(event_type=event_type, user_ids=[host.user.pk for host in rotating], now=now)
    return round_robin_choice(rotating=rotating, free_ids=free_ids, counts=counts)


def booking_team_hosts_add(*, booking: Booking) -> list[BookingHost]:
    """Write who attends `booking` (just saved) beside its organizer: the other hosts of a
    collective event type, the fixed hosts of a round-robin one. Nothing for other bookings."""
    event_type = booking.event_type
    rows = []
    if event_type is not None and is_team_hosted(event_type):
        assigned = event_type.__dict__.pop("_assigned", None)
        hosts = assigned.hosts if assigned is not None else team_hosts(event_type)
        rows = [
            BookingHost(booking_id=booking.pk, user=host.user)
            for host in hosts
            if host.is_fixed and host.user.pk != booking.organizer_id
        ]
        BookingHost.objects.bulk_create(rows)
    # The booking's answer shows them: held as if prefetched, so that it reads nothing back.
    record_loaded(booking, "team_hosts", rows)
    return rows


def booking_team_members(booking: Booking) -> list[User]:
    """The hosts attending `booking` beside its organizer, in user id order."""
    return list(
        User.objects.filter(pk__in=BookingHost.objects.filter(booking=booking).values("user_id")).order_by("pk")
    )


@transaction.atomic
def booking_reassign(
    *, booking: Booking, actor: User, user_id: int | None = None, reason: str = "", now: datetime | None = None
) -> Booking:
    """Give a round-robin booking to another of its event type's round-robin hosts, as Cal.com's
    reassign: to `user_id` (a round-robin host free at the booking's time, not its organizer), or
    without it to the one the assignment rules pick among the free others. The host's side decides
    (`booking_manages`, as for confirming). Emits BOOKING_REASSIGNED; `reason` is kept as the
    booking's `metadata.reassignReason`."""
    now = now or timezone.now()
    if not actor.is_system_admin and not booking_is_managed_by(booking_id=booking.pk, user=actor):
        raise PermissionDenied("Only the organizer, the event type's owner or team admins may reassign.")
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in (BookingStatus.ACCEPTED, BookingStatus.PENDING):
        raise Conflict(f"Booking {booking.pk} is {booking.status} and cannot be reassigned.")
    event_type = booking.event_type
    if event_type is None or not is_team_hosted(event_type) or event_type.scheduling_type != SchedulingType.ROUND_ROBIN:
        raise ApplicationError("Only a booking of a round-robin event type can be reassigned.")
    hosts = team_hosts(event_type)
    rotating = [host for host in hosts if not host.is_fixed]
    if user_id is not None and user_id not in {host.user.pk for host in rotating}:
        raise ValidationError({"userId": f"User {user_id} is not a round-robin host of event type {event_type.pk}."})
    if user_id == booking.organizer_id:
        raise ValidationError({"userId": f"User {user_id} is already the booking's host."})
    free_ids = [
        free_id
        for free_id in team_slot_hosts(
            event_type=event_type,
            start=booking.start_time,
            # The booking exists already: the minimum notice is not the new host's to meet.
            now=booking.start_time - timedelta(minutes=event_type.minimum_booking_notice),
            exclude_booking_id=booking.pk,
            hosts=hosts,
            lock=True,
        )
        if free_id != booking.organizer_id
    ]
    if user_id is not None and user_id not in free_ids:
        raise Conflict(f"User {user_id} is not free at {iso_utc(booking.start_time)}.")
    if not free_ids:
        raise Conflict(f"No other round-robin host is free at {iso_utc(booking.start_time)}.")
    if user_id is None:
        user_id = _assigned_host(event_type=event_type, rotating=rotating, free_ids=free_ids, now=now)
    booking.organizer = next(host.user for host in rotating if host.user.pk == user_id)
    if reason:
        booking.metadata = {**booking.metadata, "reassignReason": reason}
    booking.save(update_fields=["organizer", "metadata", "updated_at"])
    # A payment keeps its booking's organizer (payments.models.Payment.organizer).
    Payment.objects.filter(booking_id=booking.pk).update(organizer_id=booking.organizer_id)
    webhooks = booking_webhooks(booking)
    subscribed = subscribed_to(WebhookTrigger.BOOKING_REASSIGNED, webhooks)
    if subscribed:
        payload = booking_payload(booking, trigger=WebhookTrigger.BOOKING_REASSIGNED)
        create_deliveries(webhooks=subscribed, trigger=WebhookTrigger.BOOKING_REASSIGNED, payload=payload)
    schedule_meeting_triggers(booking=booking, webhooks=webhooks)
    return booking


def booking_host_stays_free(*, booking: Booking, start: datetime, now: datetime) -> None:
    """An in-place move of a team booking keeps its organizer, who must be free at `start` (with
    every host who attends): else 409, even when another host would be. After the slot check,
    which took the hosts' locks."""
    event_type = booking.event_type
    if event_type is None or not is_team_hosted(event_type):
        return
    hosts = team_hosts(event_type)
    free_ids = team_slot_hosts(event_type=event_type, start=start, now=now, exclude_booking_id=booking.pk, hosts=hosts)
    if booking.organizer_id not in free_ids:
        raise Conflict(f"The booking's host is not free at {iso_utc(start)}; reschedule it as a new booking instead.")


def rescheduled_host(*, previous: Booking, start: datetime, now: datetime) -> User:
    """The organizer of the booking that replaces `previous` at `start` (Cal.com's reschedule): the
    same one, except that a team booking whose host is not free then is assigned again. When no
    host is free, the same one (the slot check that follows refuses the time)."""
    event_type = previous.event_type
    if not is_team_hosted(event_type):
        return previous.organizer  # locked by the slot check (`slot_is_offered`)
    return booking_host(event_type=event_type, start=start, now=now, previous=previous) or previous.organizer
