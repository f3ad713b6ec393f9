"""Writes of schedules and their availability (docs/api.md, Schedules).

The owner's `default_schedule` is kept consistent here, under a lock on the owner's row, so that
two concurrent creates or deletes cannot leave a user with a default that is not theirs or none
while they still have schedules.
"""

import functools
from datetime import date, time
from typing import TypedDict

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, connections, router, transaction
from django.utils import timezone

from accounts.models import User
from core.exceptions import Forbidden
from core.fastpath.compiled_queries import CompiledValues, Parameter
from core.fastpath.loaded import record_loaded
from core.fastpath.switch import fast_paths
from core.limits import limit
from scheduling.models import Availability, Schedule

DEFAULT_AVAILABILITY = ({"days": [1, 2, 3, 4, 5], "start_time": time(9, 0), "end_time": time(17, 0), "date": None},)


class AvailabilityRow(TypedDict, total=False):
    days: list[int]
    start_time: time
    end_time: time
    date: date | None


def _lock_user(user: User) -> User:
    """Lock the owner's row for the rest of the transaction and read their default schedule as
    it now stands (into `user`, which is returned)."""
    rows = _locked_default().rows(pk=user.pk)
    if not rows:
        raise User.DoesNotExist(f"User {user.pk} does not exist.")
    ((user.default_schedule_id,),) = rows
    return user


@functools.cache
def _locked_default() -> CompiledValues:
    """`SELECT default_schedule_id … FOR UPDATE` of one user, compiled once: the ORM built the whole
    user row's query on every write of a schedule (docs/benchmarks.md, "Profiling and what
    changed")."""
    rows = User.objects.filter(pk=Parameter("pk", User._meta.pk)).select_for_update().order_by()
    return CompiledValues(rows.values_list("default_schedule_id"))


@functools.cache
def _insert_locking_owner_sql(alias: str) -> str:
    """`INSERT` of a schedule that first locks its owner's row (`SELECT … FOR UPDATE`, as
    `_lock_user`) and returns the new key with the owner's default as it stands under that lock.
    Written once per process from the models' tables and columns."""
    quote = connections[alias].ops.quote_name
    user, schedule = User._meta, Schedule._meta
    user_key, default = quote(user.pk.column), quote(user.get_field("default_schedule").column)
    columns = ", ".join(quote(schedule.get_field(name).column) for name in ("user", "name", "time_zone", "created_at"))
    return (
        f"WITH owner AS (SELECT {user_key} AS id, {default} AS default_schedule_id "
        f"FROM {quote(user.db_table)} WHERE {user_key} = %s FOR UPDATE) "
        f"INSERT INTO {quote(schedule.db_table)} ({columns}) SELECT owner.id, %s, %s, %s FROM owner "
        f"RETURNING {quote(schedule.pk.column)}, (SELECT default_schedule_id FROM owner)"
    )


def _insert_locking_owner(schedule: Schedule) -> None:
    """Save a new, validated schedule in one statement that also locks its owner's row for the
    rest of the transaction and reads their default schedule under that lock (into
    `schedule.user`). The lock and `save()` were two round trips, and `save()` built its INSERT
    with the ORM on every create (docs/benchmarks.md, "Profiling and what changed"). With the
    switch off (`FAST_PATHS`): the lock, then the ORM's `save()`."""
    if not fast_paths():
        _lock_user(schedule.user)
        schedule.save(force_insert=True)
        return
    owner, alias = schedule.user, router.db_for_write(Schedule)
    database = connections[alias]
    values = [
        schedule._meta.get_field(name).get_db_prep_save(getattr(schedule, name), database)
        for name in ("name", "time_zone", "created_at")
    ]
    with database.cursor() as cursor:
        cursor.execute(_insert_locking_owner_sql(alias), [owner.pk, *values])
        row = cursor.fetchone()
    if row is None:
        raise User.DoesNotExist(f"User {owner.pk} does not exist.")
    schedule.pk, owner.default_schedule_id = row
    schedule._state.adding, schedule._state.db = False, alias


def _constraint_error(error: IntegrityError) -> ValidationError | None:
    """The error `full_clean()` gives for the Availability check constraint PostgreSQL refused."""
    name = getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)
    for constraint in Availability._meta.constraints:
        if constraint.name == name:
            return ValidationError({NON_FIELD_ERRORS: [constraint.get_violation_error_message()]})
    return None


def _create_availability(*, schedule: Schedule, rows) -> list[Availability]:
    """Write the rows of a schedule in one INSERT and return them, with the ids PostgreSQL gave them
    in the order it gave them (the order GET reads them in).

    At most API_LIMITS["SCHEDULE_AVAILABILITY_ROWS"] rows (every GET /slots of the schedule walks
    them all). Each row's fields are validated here; its check constraints (days within the week, weekly rule
    or date override, start before end) are left to PostgreSQL, which enforces them on insert:
    `full_clean()` would check each with a SELECT of its own. The serializers and the admin form
    validate the same rules first, so only a direct caller can meet the database's refusal, and it
    gets the ValidationError that `full_clean()` would have raised for that constraint.
    """
    maximum = limit("SCHEDULE_AVAILABILITY_ROWS")
    if len(rows) > maximum:
        raise ValidationError({"availability": [f"A schedule may have at most {maximum} availability rows."]})
    new_rows = []
    for row in rows:
        availability = Availability(
            schedule_id=schedule.pk,  # not `schedule=`: the row would point back at the schedule that holds it
            days_mask=Availability.mask_for(row.get("days") or []),
            start_time=row["start_time"],
            end_time=row["end_time"],
            date=row.get("date"),
        )
        availability.full_clean(exclude=["schedule"], validate_constraints=False)
        new_rows.append(availability)
    try:
        return Availability.objects.bulk_create(new_rows)
    except IntegrityError as error:
        validation_error = _constraint_error(error)
        if validation_error is None:
            raise
        raise validation_error from error


def _replace_availability(*, schedule: Schedule, rows) -> None:
    """Delete every row and write the new list; the caller's transaction makes it atomic. The
    schedule holds the new rows afterwards (not rows loaded before, such as a create's)."""
    Availability.objects.filter(schedule=schedule).delete()
    record_loaded(schedule, "availability", _create_availability(schedule=schedule, rows=rows))


def _next_default(*, user: User, excluding: Schedule) -> Schedule | None:
    return user.schedules.exclude(pk=excluding.pk).order_by("id").first()


@transaction.atomic
def schedule_create(
    *,
    actor: User,
    name: str,
    time_zone: str,
    user_id: int | None = None,
    availability: list[AvailabilityRow] | None = None,
    is_default: bool | None = None,
) -> Schedule:
    """Make a schedule for the actor, or for `user_id` when the actor is a system admin.

    Without `availability` it gets Mon–Fri 09:00–17:00. It becomes the owner's default when asked,
    or when the owner has none and the caller did not say `is_default: false`.

    The schedule comes back with what GET shows of it already loaded: its owner (with the default
    as it stands under the lock), its availability rows as written, and its event types, which are
    none (an event type can only point at a schedule that exists).
    """
    owner = actor
    if user_id is not None and user_id != actor.pk:
        if not actor.is_system_admin:
            raise Forbidden("Only system administrators may create schedules for another user.")
        owner = User.objects.filter(pk=user_id).first()
        if owner is None:
            raise ValidationError({"userId": [f"User {user_id} does not exist."]})
    schedule = Schedule(user=owner, name=name, time_zone=time_zone, created_at=timezone.now())
    # Not `user`: full_clean() would query whether the owner exists; the INSERT below finds them.
    schedule.full_clean(exclude=["user"])
    _insert_locking_owner(schedule)
    rows = _create_availability(schedule=schedule, rows=DEFAULT_AVAILABILITY if availability is None else availability)
    if is_default or (is_default is None and owner.default_schedule_id is None):
        owner.default_schedule_id = schedule.pk  # the key: the schedule already points at its owner
        owner.save(update_fields=["default_schedule"])
    record_loaded(schedule, "availability", rows)
    record_loaded(schedule, "event_types", [])
    return schedule


@transaction.atomic
def schedule_update(
    *,
    schedule: Schedule,
    name: str | None = None,
    time_zone: str | None = None,
    availability: list[AvailabilityRow] | None = None,
    is_default: bool | None = None,
) -> Schedule:
    """Change what was sent. `availability` replaces the whole list in one transaction.

    `is_default: false` on the default schedule hands the role to the owner's oldest other
    schedule (or none), as deleting it would.
    """
    owner = _lock_user(schedule.user)
    if name is not None:
        schedule.name = name
    if time_zone is not None:
        schedule.time_zone = time_zone
    schedule.full_clean(exclude=["user"])  # the owner's row is locked above
    schedule.save()
    if availability is not None:
        _replace_availability(schedule=schedule, rows=availability)
    if is_default is True and owner.default_schedule_id != schedule.pk:
        owner.default_schedule = schedule
        owner.save(update_fields=["default_schedule"])
    elif is_default is False and owner.default_schedule_id == schedule.pk:
        owner.default_schedule = _next_default(user=owner, excluding=schedule)
        owner.save(update_fields=["default_schedule"])
    return schedule


@transaction.atomic
def schedule_delete(*, schedule: Schedule) -> None:
    """Delete it; if it was the owner's default, their oldest remaining schedule takes over."""
    owner = _lock_user(schedule.user)
    was_default = owner.default_schedule_id == schedule.pk
    next_default = _next_default(user=owner, excluding=schedule) if was_default else None
    schedule.delete()
    if was_default:
        owner.default_schedule = next_default
        owner.save(update_fields=["default_schedule"])
