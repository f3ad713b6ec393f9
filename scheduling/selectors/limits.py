"""Booking limits in the database: one aggregated read of an event type's bookings per local day,
only for an event type that has limits (`scheduling.limits` has the rules).

Counted: the event type's accepted and pending bookings (a pending one holds its time as an accepted
one does, and counting it keeps two requests from passing a limit once both are confirmed);
cancelled and rejected ones free their place. A booking being rescheduled does not count against
its own move.

A booking being written takes, in the same statement as the read, the event type's advisory lock
(`LIMIT_LOCK_SPACE`), after the people's locks (scheduling.services.assignment): two bookings of a
round-robin event type by different hosts cannot both take the last place of a period.
"""

import functools
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from django.db import connection

from core.exceptions import Conflict
from scheduling.limits import PeriodTotals, broken_limit, describe, local_midnight, span
from scheduling.models import Booking, EventType
from scheduling.selectors.slot_sources import BLOCKING_STATUSES, INT4_KEY_SQL, event_type_schedule

# The first key of the event types' limit locks: "LIMT".
LIMIT_LOCK_SPACE = 0x4C494D54


def has_limits(event_type: EventType) -> bool:
    return bool(event_type.booking_limits or event_type.duration_limits)


def limits_time_zone(event_type: EventType) -> str:
    """The zone the periods are in: the owner's, for a team event type its schedule's, else UTC."""
    if event_type.owner_id is not None:
        return event_type.owner.time_zone
    schedule = event_type_schedule(event_type)
    return schedule.time_zone if schedule is not None else "UTC"


@functools.cache
def _totals_sql(*, locking: bool) -> str:
    table = connection.ops.quote_name(Booking._meta.db_table)
    totals = (
        'SELECT ("start_time" AT TIME ZONE %s)::date AS "day", count(*) AS "bookings", '
        '(sum(extract(epoch FROM "end_time" - "start_time")) / 60)::bigint AS "minutes" '
        f'FROM {table} WHERE "event_type_id" = %s AND "status" IN (%s, %s) '
        'AND "start_time" >= %s AND "start_time" < %s AND "id" <> %s'
    )
    if not locking:
        return f"{totals} GROUP BY 1"
    # The lock's one row comes first and the totals refer to it, so it is taken even when no
    # booking matches.
    lock = f'SELECT count(pg_advisory_xact_lock(%s, {INT4_KEY_SQL.format("%s::bigint")})) AS "n"'
    return (
        f'SELECT "totals".* FROM ({lock}) AS "locked" '
        f'CROSS JOIN LATERAL ({totals} AND "locked"."n" = 1 GROUP BY 1) AS "totals"'
    )


def period_totals(
    *, event_type: EventType, time_zone: str, first: date, last: date, keys, exclude_booking_id=None, lock=False
) -> PeriodTotals:
    """The event type's bookings and minutes per local day, over every period of `keys` that holds
    a day of [first, last]: one statement."""
    zone = ZoneInfo(time_zone)
    span_start, span_end = span(first, last, keys)
    params = [
        time_zone,
        event_type.pk,
        *(str(status) for status in BLOCKING_STATUSES),
        local_midnight(span_start, zone),
        local_midnight(span_end, zone),
        exclude_booking_id or 0,
    ]
    if lock:
        params = [LIMIT_LOCK_SPACE, event_type.pk, *params]
    with connection.cursor() as cursor:
        cursor.execute(_totals_sql(locking=lock), params)
        rows = cursor.fetchall()
    return PeriodTotals({day: (count, minutes) for day, count, minutes in rows})


def _keys(event_type: EventType) -> set[str]:
    return set(event_type.booking_limits or ()) | set(event_type.duration_limits or ())


def within_limits(*, event_type: EventType, grouped: dict, exclude_booking_id: int | None = None) -> dict:
    """`grouped` slots (`available_slots`' answer) without the starts in a period whose limits are
    reached; unchanged, with no statement, for an event type without limits."""
    if not has_limits(event_type) or not grouped:
        return grouped
    time_zone = limits_time_zone(event_type)
    zone = ZoneInfo(time_zone)
    days = {
        slot["time"]: datetime.fromisoformat(slot["time"]).astimezone(zone).date()
        for slots in grouped.values()
        for slot in slots
    }
    if not days:
        return grouped
    totals = period_totals(
        event_type=event_type,
        time_zone=time_zone,
        first=min(days.values()),
        last=max(days.values()),
        keys=_keys(event_type),
        exclude_booking_id=exclude_booking_id,
    )
    kept = {}
    for group, slots in grouped.items():
        open_slots = [
            slot
            for slot in slots
            if broken_limit(
                booking_limits=event_type.booking_limits,
                duration_limits=event_type.duration_limits,
                totals=totals,
                day=days[slot["time"]],
                length=event_type.length,
            )
            is None
        ]
        if open_slots:
            kept[group] = open_slots
    return kept


def broken_limits(
    *, event_type: EventType, starts: list[datetime], exclude_booking_id: int | None = None, lock: bool = False
) -> list[str | None]:
    """For each of `starts` in order (a booking, or the occurrences of a series, each counted once
    written), the limit it would break (a sentence), or None."""
    if not has_limits(event_type) or not starts:
        return [None] * len(starts)
    time_zone = limits_time_zone(event_type)
    zone = ZoneInfo(time_zone)
    days = [(start if start.tzinfo else start.replace(tzinfo=UTC)).astimezone(zone).date() for start in starts]
    totals = period_totals(
        event_type=event_type,
        time_zone=time_zone,
        first=min(days),
        last=max(days),
        keys=_keys(event_type),
        exclude_booking_id=exclude_booking_id,
        lock=lock,
    )
    answers = []
    for day in days:
        broken = broken_limit(
            booking_limits=event_type.booking_limits,
            duration_limits=event_type.duration_limits,
            totals=totals,
            day=day,
            length=event_type.length,
        )
        answers.append(None if broken is None else describe(broken, time_zone))
        if broken is None:
            count, minutes = totals.per_day.get(day, (0, 0))
            totals.per_day[day] = (count + 1, minutes + event_type.length)
            totals.forget()
    return answers


def check_booking_limits(
    *, event_type: EventType, starts: list[datetime], exclude_booking_id: int | None = None
) -> None:
    """409 when a booking (or a series' occurrence) at `starts` would break a limit of its event
    type, read under the event type's limit lock (for a booking being written)."""
    for broken in broken_limits(event_type=event_type, starts=starts, exclude_booking_id=exclude_booking_id, lock=True):
        if broken is not None:
            raise Conflict(broken)


def limit_reasons(*, event_type: EventType, start: datetime) -> list[dict]:
    """The why-not endpoint's `limit` reason for `start`, if a limit removes it."""
    broken = broken_limits(event_type=event_type, starts=[start])[0]
    return [] if broken is None else [{"rule": "limit", "detail": broken}]
