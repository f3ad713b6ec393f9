"""The database side of slot computation: load a schedule and the host's busy time, then hand
them to the pure `scheduling.slots` functions."""

import functools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import connections
from django.db.models import OuterRef, Q, Subquery

from accounts.models import User
from calendars.selectors import busy_rows_with_buffers
from core.fastpath.compiled_queries import CompiledValues, Parameter
from holds.selectors import held_time
from scheduling.models import Availability, Booking, BookingStatus, EventType, Schedule
from scheduling.recurrence import Recurrence, plan_series, series_free_starts, series_horizon
from scheduling.selectors.hosts import is_team_hosted
from scheduling.slots import DateOverride, SlotRequest, WeeklyRule, free_slots, free_slots_on_days, group_by_day

BLOCKING_STATUSES = (BookingStatus.ACCEPTED, BookingStatus.PENDING)


def event_type_host(event_type: EventType) -> User | None:
    """Who is booked: the owner, or for a team event type the owner of its schedule."""
    if event_type.owner_id is not None:
        return event_type.owner
    return event_type.schedule.user if event_type.schedule_id is not None else None


def event_type_schedule(event_type: EventType) -> Schedule | None:
    if event_type.schedule_id is not None:
        return event_type.schedule
    host = event_type_host(event_type)
    return host.default_schedule if host is not None and host.default_schedule_id is not None else None


def _rules(
    schedule: Schedule, first_day, last_day, lock_user_ids: list[int] | None = None
) -> tuple[tuple[WeeklyRule, ...], tuple[DateOverride, ...]]:
    """The schedule's rules between two days; with `lock_user_ids`, read after taking those people's
    locks, in the same statement (`rows_for_each`)."""
    if lock_user_ids is None:
        return rules_of_rows(_rules_query().rows(schedule_id=schedule.pk, first_day=first_day, last_day=last_day))
    rows = rows_for_each(
        _rules_query(),
        "schedule_id",
        [schedule.pk],
        lock_user_ids=lock_user_ids,
        first_day=first_day,
        last_day=last_day,
    )
    return rules_of_rows(rows[schedule.pk])


def rules_of_rows(rows) -> tuple[tuple[WeeklyRule, ...], tuple[DateOverride, ...]]:
    """The weekly rules and the date overrides of `_rules_query`'s rows."""
    weekly, overrides = [], []
    for day, days_mask, start, end in rows:
        if day is None:
            weekly.append(WeeklyRule(days=frozenset(Availability.days_of(days_mask)), start=start, end=end))
        else:
            overrides.append(DateOverride(date=day, start=start, end=end))
    return tuple(weekly), tuple(overrides)


@functools.cache
def _rules_query() -> CompiledValues:
    """A schedule's weekly rules and its date overrides between two days, built and compiled by the
    ORM once per process (every GET /slots and every booking reads it: building it per call cost
    more CPU than PostgreSQL took to answer it, docs/benchmarks.md)."""
    day = Availability._meta.get_field("date")
    rows = (
        Availability.objects.filter(schedule_id=Parameter("schedule_id", Schedule._meta.pk))
        .exclude(date__lt=Parameter("first_day", day))
        .exclude(date__gt=Parameter("last_day", day))
    )
    return CompiledValues(rows.values_list("date", "days_mask", "start_time", "end_time"))


# The first key of the two-key advisory locks of people (the second is the user id): "HOST". Every
# path that writes or moves a booking takes the lock of each person it makes busy before reading
# their busy time (scheduling.services.assignment), in one of two ways: alone (`lock_people`), or
# in the statement that reads the schedule's rules just before the busy time (`rows_for_each`).
PERSON_LOCK_SPACE = 0x484F5354
# The people's locks in one statement, one after the other in user id order, so that two
# transactions never hold one each while waiting for the other; one row.
LOCK_PEOPLE_SQL = (
    'SELECT count(pg_advisory_xact_lock(%s, "person"."id")) '
    'FROM (SELECT unnest(%s::int[]) AS "id" ORDER BY 1) AS "person"'
)


@functools.cache
def _for_each_sql(statement: CompiledValues, name: str, *, locking: bool) -> str:
    """`statement`'s SQL run once per value of its parameter `name`, in one statement: a LATERAL
    join over an array of those values (the first placeholder), each row followed by the value it
    was read for. The other parameters keep their places; the columns before the last are the
    statement's own, so its converters apply as they are. `locking`: the people's locks are taken
    first (`LOCK_PEOPLE_SQL`, its placeholders next), in a one-row subquery that the values come
    from, so they are held before any row is read, even when no row matches."""
    pieces = statement.sql.split("%s")
    if "%%" in statement.sql or len(pieces) != len(statement.params) + 1:
        raise ValueError("The statement's placeholders cannot be told apart.")
    body = pieces[0]
    for param, piece in zip(statement.params, pieces[1:], strict=True):
        each = isinstance(param, Parameter) and param.name == name
        body += ('"each_value"."id"' if each else "%s") + piece
    values = 'unnest(%s::bigint[]) AS "each_value"("id")'
    if locking:
        values = f'(SELECT unnest(%s::bigint[]) AS "id" FROM ({LOCK_PEOPLE_SQL}) AS "locked") AS "each_value"'
    return f'SELECT "per_value".*, "each_value"."id" FROM {values} CROSS JOIN LATERAL ({body}) AS "per_value"'


def rows_for_each(
    statement: CompiledValues, name: str, ids: list[int], *, lock_user_ids: list[int] | None = None, **values
) -> dict[int, list[tuple]]:
    """`{id: statement's rows with its parameter `name` = id}` for each of `ids` (distinct), in one
    query; with `lock_user_ids`, that query first takes those people's locks (`PERSON_LOCK_SPACE`)."""
    found = {each: [] for each in ids}
    if not ids and lock_user_ids is None:
        return found
    params = [
        values[param.name] if isinstance(param, Parameter) else param
        for param in statement.params
        if not (isinstance(param, Parameter) and param.name == name)
    ]
    locks = [PERSON_LOCK_SPACE, sorted(lock_user_ids)] if lock_user_ids is not None else []
    database = connections[statement.db]
    with database.cursor() as cursor:
        cursor.execute(_for_each_sql(statement, name, locking=lock_user_ids is not None), [list(ids), *locks, *params])
        rows = cursor.fetchall()
    converted = statement.converted([row[:-1] for row in rows], database)
    for row, values_of_row in zip(rows, converted, strict=True):
        found[row[-1]].append(values_of_row)
    return found


def _busy(host: User, start: datetime, end: datetime, exclude_booking_id: int | None):
    """The host's accepted and pending bookings near [start, end), each widened by its own buffers,
    the host's held time there (slot reservations, out-of-office entries: no buffers) and the busy
    time of their connected calendars (`calendars.selectors.busy_times`)."""
    bookings = _busy_query(excluding=exclude_booking_id is not None).rows(
        host_id=host.pk, start=start, end=end, excluded=exclude_booking_id
    )
    return tuple(
        (booking_start - timedelta(minutes=before or 0), booking_end + timedelta(minutes=after or 0))
        for booking_start, booking_end, before, after in bookings
    )


@functools.cache
def _busy_query(*, excluding: bool) -> CompiledValues:
    """`_busy`'s bookings (with their event types' buffers), compiled once per process, as
    `_rules_query`; one variant leaves one booking out (a reschedule's own). The host's own bookings
    and, in the same statement, the team bookings they attend beside another organizer
    (`BookingHost`)."""
    moment = Booking._meta.get_field("start_time")
    host_id = Parameter("host_id", User._meta.pk)
    near = Q(
        status__in=BLOCKING_STATUSES,
        start_time__lt=Parameter("end", moment),
        end_time__gt=Parameter("start", moment),
    )
    own = Booking.objects.filter(near, organizer_id=host_id).order_by()
    attended = Booking.objects.filter(near, team_hosts__user_id=host_id).order_by()
    if excluding:
        own = own.exclude(pk=Parameter("excluded", Booking._meta.pk))
        attended = attended.exclude(pk=Parameter("excluded", Booking._meta.pk))
    # Each booking's buffers are read from its event type by primary key, row by row: a join let
    # the planner hash the whole event-type table (50,000 rows in the big installation of
    # `make bench-scale`: 64 of a 68 ms statement) for the few hundred bookings of a month.
    buffers = {
        name: Subquery(EventType.objects.filter(pk=OuterRef("event_type_id")).values(f"{name}_event_buffer")[:1])
        for name in ("before", "after")
    }
    own, attended = own.annotate(**buffers), attended.annotate(**buffers)
    columns = ("start_time", "end_time", "before", "after")
    # In the same statement, as rows of the same shape: the host's held time (reservations, out of
    # office) and the busy time of their connected calendars.
    held = held_time(host_id=host_id, start=Parameter("start", moment), end=Parameter("end", moment))
    calendar = busy_rows_with_buffers(host_id, Parameter("start", moment), Parameter("end", moment))
    return CompiledValues(own.values_list(*columns).union(attended.values_list(*columns), *held, calendar, all=True))


def slot_request_for(
    *,
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    now: datetime,
    exclude_booking_id: int | None = None,
    lock: bool = False,
) -> SlotRequest | None:
    """Everything `free_slots` needs, or None when the event type has no host or no schedule.
    `lock`: for a booking being written, the host's lock is taken before their busy time is read
    (with the schedule's rules, which are read first)."""
    host = event_type_host(event_type)
    schedule = event_type_schedule(event_type)
    if host is None or schedule is None:
        return None
    # A day of margin: windows are built per local day, and existing bookings' buffers reach out.
    margin = timedelta(days=1, minutes=event_type.length + event_type.before_event_buffer)
    margin += timedelta(minutes=event_type.after_event_buffer)
    first_day, last_day = (range_start - margin).date(), (range_end + margin).date()
    weekly, overrides = _rules(schedule, first_day, last_day, [host.pk] if lock else None)
    return SlotRequest(
        time_zone=schedule.time_zone,
        weekly_rules=weekly,
        overrides=overrides,
        length=event_type.length,
        interval=event_type.slot_interval,
        minimum_notice=event_type.minimum_booking_notice,
        before_buffer=event_type.before_event_buffer,
        after_buffer=event_type.after_event_buffer,
        range_start=range_start,
        range_end=range_end,
        now=now,
        busy=_busy(host, range_start - margin, range_end + margin, exclude_booking_id),
    )


def slot_is_offered(
    *, event_type: EventType, start: datetime, now: datetime, exclude_booking_id: int | None = None, lock: bool = False
) -> bool:
    """Whether `start` is exactly a slot that GET /slots offers (ignoring `exclude_booking_id`).
    `lock`: for a booking being written, the locks of the people it makes busy are taken before
    their busy time is read."""
    if is_team_hosted(event_type):
        from scheduling.selectors.team_slots import team_slot_hosts  # it builds on this module

        # A booking being written whose host `booking_host` found free at this start, under the
        # hosts' locks (scheduling.services.assignment.AssignedSlot): no need to ask again.
        assigned = getattr(event_type, "_assigned", None)
        if assigned is not None and (assigned.start, assigned.now, assigned.excluded) == (
            start,
            now,
            exclude_booking_id,
        ):
            return True
        free = team_slot_hosts(
            event_type=event_type, start=start, now=now, exclude_booking_id=exclude_booking_id, lock=lock
        )
        return bool(free)
    request = slot_request_for(
        event_type=event_type,
        range_start=start,
        range_end=start + timedelta(minutes=1),
        now=now,
        exclude_booking_id=exclude_booking_id,
        lock=lock,
    )
    return request is not None and start in free_slots(request)


def _recurrence_and_count(event_type: EventType, recurring_count: int | None) -> tuple[Recurrence | None, int]:
    if not event_type.recurring_event:
        return None, 1
    recurrence = Recurrence.from_json(event_type.recurring_event)
    return recurrence, recurring_count or recurrence.count


def offered_occurrences(
    *, event_type: EventType, starts: list[datetime], now: datetime, exclude_booking_id: int | None = None
) -> list[bool]:
    """For each of `starts` (the occurrences of a series), whether GET /slots offers it: free in
    the host's schedule (weekly rules, date overrides, notice, buffers, other bookings). Two
    queries for the whole series, whatever its span."""
    if not starts:
        return []
    request = slot_request_for(
        event_type=event_type,
        range_start=min(starts),
        range_end=max(starts) + timedelta(minutes=1),
        now=now,
        exclude_booking_id=exclude_booking_id,
    )
    if request is None:
        return [False] * len(starts)
    zone = ZoneInfo(request.time_zone)
    offered = free_slots_on_days(request, {start.astimezone(zone).date() for start in starts})
    return [start.astimezone(UTC).replace(tzinfo=None) in offered for start in starts]


def available_slots(
    *,
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    time_zone: str,
    now: datetime,
    recurring_count: int | None = None,
    exclude_booking_id: int | None = None,
) -> dict[str, list[dict[str, str]]]:
    """`{"2026-11-23": [{"time": "2026-11-23T09:00:00+01:00"}, …]}` grouped in `time_zone`. For a
    recurring event type, only the starts whose whole series (`recurring_count` occurrences, else
    the event type's count) is free: the availability and bookings are then loaded once, as far
    ahead as the last occurrence of a series starting in the range can fall. `exclude_booking_id`: a
    booking being rescheduled, whose own time counts as free (as the reschedule itself counts it)."""
    if is_team_hosted(event_type):
        from scheduling.selectors.team_slots import team_available_slots  # it builds on this module

        return team_available_slots(
            event_type=event_type,
            range_start=range_start,
            range_end=range_end,
            time_zone=time_zone,
            now=now,
            exclude_booking_id=exclude_booking_id,
        )
    recurrence, count = _recurrence_and_count(event_type, recurring_count)
    is_series = recurrence is not None and count > 1
    load_until = range_end
    if is_series:
        schedule = event_type_schedule(event_type)
        if schedule is None:
            return {}
        load_until = series_horizon(range_start, range_end, schedule.time_zone, recurrence, count)
        if load_until is None:
            return {}
    request = slot_request_for(
        event_type=event_type,
        range_start=range_start,
        range_end=load_until,
        now=now,
        exclude_booking_id=exclude_booking_id,
    )
    if request is None:
        return {}
    slots = free_slots(replace(request, range_end=range_end))
    if is_series and slots:
        slots = series_free_starts(request, plan_series(slots, request.time_zone, recurrence, count))
    return group_by_day(slots, time_zone)
