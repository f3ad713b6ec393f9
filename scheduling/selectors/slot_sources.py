"""The database side of slot computation, what the slots of one host and of a team's hosts are
built from: an event type's host and schedule, a schedule's rules and a person's busy time (each
read by a statement compiled once per process, for one id or for many at once: `rows_for_each`),
the people's advisory locks taken in those same statements, and `slot_request_for`, which hands one
host's to the pure `scheduling.slots` functions. Built on by scheduling.selectors.team_slots,
scheduling.selectors.limits and scheduling.selectors.slots."""

import functools
from datetime import datetime, timedelta

from django.db import connections
from django.db.models import OuterRef, Q, Subquery

from accounts.models import User
from calendars.selectors import busy_rows_with_buffers
from core.fastpath.compiled_queries import CompiledValues, Parameter
from holds.selectors import held_time
from scheduling.models import Availability, Booking, BookingStatus, EventType, Schedule
from scheduling.slots import DateOverride, SlotRequest, WeeklyRule

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


def schedule_rules(
    schedule: Schedule, first_day, last_day, lock_user_ids: list[int] | None = None
) -> tuple[tuple[WeeklyRule, ...], tuple[DateOverride, ...]]:
    """The schedule's rules between two days; with `lock_user_ids`, read after taking those people's
    locks, in the same statement (`rows_for_each`)."""
    if lock_user_ids is None:
        return rules_of_rows(rules_query().rows(schedule_id=schedule.pk, first_day=first_day, last_day=last_day))
    rows = rows_for_each(
        rules_query(),
        "schedule_id",
        [schedule.pk],
        lock_user_ids=lock_user_ids,
        first_day=first_day,
        last_day=last_day,
    )
    return rules_of_rows(rows[schedule.pk])


def rules_of_rows(rows) -> tuple[tuple[WeeklyRule, ...], tuple[DateOverride, ...]]:
    """The weekly rules and the date overrides of `rules_query`'s rows."""
    weekly, overrides = [], []
    for day, days_mask, start, end in rows:
        if day is None:
            weekly.append(WeeklyRule(days=frozenset(Availability.days_of(days_mask)), start=start, end=end))
        else:
            overrides.append(DateOverride(date=day, start=start, end=end))
    return tuple(weekly), tuple(overrides)


@functools.cache
def rules_query() -> CompiledValues:
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


# The first key of the two-key advisory locks of people (the second is derived from the user id,
# `INT4_KEY_SQL`): "HOST". Every path that writes or moves a booking takes the lock of each person it
# makes busy before reading their busy time (scheduling.services.assignment), in one of two ways:
# alone (`lock_people`), or in the statement that reads the schedule's rules just before the busy
# time (`rows_for_each`).
PERSON_LOCK_SPACE = 0x484F5354
# The second key of a two-key advisory lock is an int4, ids are bigint: the id's low 32 bits, read as
# a signed int4 (`{}` is a bigint expression). An id below 2**31 is its own key; two ids 2**32 apart
# share one, which only makes them wait on each other, never lets two hold one lock.
INT4_KEY_SQL = "((({} %% 4294967296) + 6442450944) %% 4294967296 - 2147483648)::int"
# The people's locks in one statement, one after the other in key order (distinct keys), so that two
# transactions never hold one each while waiting for the other; one row.
LOCK_PEOPLE_SQL = (
    'SELECT count(pg_advisory_xact_lock(%s, "person"."key")) '
    "FROM (SELECT DISTINCT " + INT4_KEY_SQL.format('"id"') + ' AS "key" '
    'FROM unnest(%s::bigint[]) AS "id" ORDER BY 1) AS "person"'
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


def busy_between(host: User, start: datetime, end: datetime, exclude_booking_id: int | None):
    """The host's accepted and pending bookings near [start, end), each widened by its own buffers,
    the host's held time there (slot reservations, out-of-office entries: no buffers) and the busy
    time of their connected calendars (`calendars.selectors.busy_times`)."""
    rows = busy_query(excluding=exclude_booking_id is not None).rows(
        host_id=host.pk, start=start, end=end, excluded=exclude_booking_id
    )
    return tuple(
        (busy_start - timedelta(minutes=before or 0), busy_end + timedelta(minutes=after or 0))
        if before or after
        else (busy_start, busy_end)  # held and calendar busy time, most rows with calendars connected
        for busy_start, busy_end, before, after in rows
    )


class _Minutes(Subquery):
    """A booking's buffer, in minutes, as PostgreSQL gives it (an integer column: already an `int`
    or None). The ORM's converter of an integer expression would call `int()` on it in every row
    of the busy-time statement, held and calendar rows included, for nothing."""

    convert_value = staticmethod(Subquery._convert_value_noop)


@functools.cache
def busy_query(*, excluding: bool) -> CompiledValues:
    """`busy_between`'s bookings (with their event types' buffers), compiled once per process, as
    `rules_query`; one variant leaves one booking out (a reschedule's own). The host's own bookings
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
        name: _Minutes(EventType.objects.filter(pk=OuterRef("event_type_id")).values(f"{name}_event_buffer")[:1])
        for name in ("before", "after")
    }
    own, attended = own.annotate(**buffers), attended.annotate(**buffers)
    columns = ("start_time", "end_time", "before", "after")
    # In the same statement, as rows of the same shape: the host's held time (reservations, out of
    # office) and the busy time of their connected calendars.
    held = held_time(host_id=host_id, start=Parameter("start", moment), end=Parameter("end", moment))
    calendar = busy_rows_with_buffers(host_id, Parameter("start", moment), Parameter("end", moment))
    rows = own.values_list(*columns).union(attended.values_list(*columns), *held, calendar, all=True)
    # Integers and date-times only: read in binary (a connected calendar's hundreds of periods
    # cost PostgreSQL more to write as text, and psycopg more to read, than all else in the row).
    return CompiledValues(rows, binary=True)


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
    weekly, overrides = schedule_rules(schedule, first_day, last_day, [host.pk] if lock else None)
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
        busy=busy_between(host, range_start - margin, range_end + margin, exclude_booking_id),
    )
