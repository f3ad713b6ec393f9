"""Who a booking of a team event type goes to, and who attends it beside the organizer.

- Collective: the organizer is the first host (lowest user id); every other host attends.
- Round robin: among the round-robin hosts free at the start, the highest `priority` wins; among
  those, the one furthest below their weighted share of this month's bookings of the event type
  (Cal.com's weights: `total × weight / total weight − own`; with equal weights, the least booked
  host), then the fewer bookings, then the lowest user id. Fixed hosts attend every booking.
- A reschedule keeps its organizer when they are free at the new time, else assigns again.

Two bookings racing for the same hosts take turns: each locks its hosts (PostgreSQL advisory
locks held to the end of the transaction, taken in user id order so that no two wait on each
other) before reading who is free, so the second sees the first's booking. The exclusion
constraint on the organizer stays the last word.
"""

from datetime import datetime

from django.db import connection
from django.db.models import Count

from accounts.models import User
from core.loaded import record_loaded
from scheduling.models import Booking, BookingHost, BookingStatus, EventType, SchedulingType
from scheduling.selectors.hosts import TeamHost, is_team_hosted, team_hosts
from scheduling.selectors.slots import event_type_host
from scheduling.selectors.team_slots import team_slot_hosts

# The first key of the two-key advisory locks of hosts (the second is the user id): "HOST".
HOST_LOCK_SPACE = 0x484F5354


def _lock_hosts(user_ids: list[int]) -> None:
    with connection.cursor() as cursor:
        for user_id in sorted(user_ids):
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [HOST_LOCK_SPACE, user_id])


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
        return event_type_host(event_type)
    hosts = team_hosts(event_type)
    if not hosts:
        return None
    _lock_hosts([host.user.pk for host in hosts])
    excluded = previous.pk if previous is not None else None
    free_ids = team_slot_hosts(event_type=event_type, start=start, now=now, exclude_booking_id=excluded, hosts=hosts)
    if not free_ids:
        return None
    by_id = {host.user.pk: host.user for host in hosts}
    rotating = [host for host in hosts if not host.is_fixed]
    if event_type.scheduling_type == SchedulingType.COLLECTIVE or not rotating:
        return hosts[0].user
    if previous is not None and previous.organizer_id in free_ids:
        return by_id[previous.organizer_id]
    counts = period_booking_counts(event_type=event_type, user_ids=[host.user.pk for host in rotating], now=now)
    return by_id[round_robin_choice(rotating=rotating, free_ids=free_ids, counts=counts)]


def booking_team_hosts_add(*, booking: Booking) -> list[BookingHost]:
    """Write who attends `booking` (just saved) beside its organizer: the other hosts of a
    collective event type, the fixed hosts of a round-robin one. Nothing for other bookings."""
    event_type = booking.event_type
    rows = []
    if event_type is not None and is_team_hosted(event_type):
        rows = [
            BookingHost(booking_id=booking.pk, user=host.user)
            for host in team_hosts(event_type)
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
