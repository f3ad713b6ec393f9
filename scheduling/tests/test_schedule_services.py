"""The schedule services called directly (the admin and other code do, not only the API).

The serializers validate availability rows before the services see them; a direct caller's bad row
is refused by PostgreSQL's check constraints and must get the same error `full_clean()` gives.
"""

from datetime import date, time

import psycopg
import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from accounts.tests.factories import UserFactory
from scheduling.models import Availability, Schedule
from scheduling.services.schedules import _lock_user, schedule_create, schedule_update
from scheduling.tests.factories import ScheduleFactory
from tests.support.database import another_session

pytestmark = pytest.mark.django_db

GOOD_ROW = {"start_time": time(9), "end_time": time(17)}
ROWS_THE_DATABASE_REFUSES = [
    pytest.param({"days": [7], "start_time": time(9), "end_time": time(10)}, id="day outside the week"),
    pytest.param({"days": [], "start_time": time(9), "end_time": time(10)}, id="weekly rule without days"),
    pytest.param(
        {"days": [1], "date": date(2026, 12, 24), "start_time": time(9), "end_time": time(10)},
        id="date override with days",
    ),
    pytest.param({"days": [1], "start_time": time(11), "end_time": time(10)}, id="end before start"),
]


def full_clean_error(row: dict) -> dict:
    """What `full_clean()`, constraints included, says about the row."""
    availability = Availability(
        schedule=ScheduleFactory.build(),
        days_mask=Availability.mask_for(row["days"]),
        start_time=row["start_time"],
        end_time=row["end_time"],
        date=row.get("date"),
    )
    with pytest.raises(ValidationError) as error:
        availability.full_clean(exclude=["schedule"])
    return error.value.message_dict


def snapshot():
    return (
        list(Schedule.objects.order_by("id").values_list("id", "name", "user_id")),
        list(Availability.objects.order_by("id").values_list("id", "schedule_id", "days_mask", "start_time")),
        list(User.objects.order_by("id").values_list("id", "default_schedule_id")),
    )


@pytest.mark.parametrize("row", ROWS_THE_DATABASE_REFUSES)
def test_create_with_a_row_the_database_refuses_raises_what_full_clean_raises_and_writes_nothing(row):
    owner = UserFactory()
    expected = full_clean_error(row)
    before = snapshot()

    with pytest.raises(ValidationError) as error:
        schedule_create(actor=owner, name="Work", time_zone="UTC", availability=[row])

    assert error.value.message_dict == expected
    assert snapshot() == before


@pytest.mark.parametrize("row", ROWS_THE_DATABASE_REFUSES)
def test_update_with_a_row_the_database_refuses_raises_what_full_clean_raises_and_changes_nothing(row):
    schedule = ScheduleFactory()
    expected = full_clean_error(row)
    before = snapshot()

    with pytest.raises(ValidationError) as error:
        schedule_update(schedule=schedule, name="Renamed", availability=[{"days": [2], **GOOD_ROW}, row])

    assert error.value.message_dict == expected
    assert snapshot() == before


def test_create_writes_the_schedule_and_all_its_rows():
    owner = UserFactory()

    schedule = schedule_create(
        actor=owner,
        name="Work",
        time_zone="UTC",
        availability=[
            {"days": [1, 3], **GOOD_ROW},
            {"days": [], "date": date(2026, 12, 25), "start_time": time(0), "end_time": time(0)},
        ],
    )

    rows = schedule.availability.order_by("id").values_list("days_mask", "start_time", "end_time", "date")
    assert list(rows) == [
        (Availability.mask_for([1, 3]), time(9), time(17), None),
        (0, time(0), time(0), date(2026, 12, 25)),
    ]
    owner.refresh_from_db()
    assert owner.default_schedule_id == schedule.pk


def _as_stored(rows) -> list[tuple]:
    return [(row.pk, row.schedule_id, row.days_mask, row.start_time, row.end_time, row.date) for row in rows]


def test_the_schedule_a_write_returns_holds_its_rows_as_stored(django_assert_num_queries):
    """A create returns the schedule holding its rows (with their ids) and its event types (none),
    so the API answers without reading them back; after an update it holds the new rows, never
    the ones it was created with."""
    owner = UserFactory()
    schedule = schedule_create(
        actor=owner,
        name="Work",
        time_zone="UTC",
        availability=[{"days": [5, 1], **GOOD_ROW}, {"days": [0], **GOOD_ROW}],
    )

    with django_assert_num_queries(0):
        held = _as_stored(schedule.availability.all())
        assert list(schedule.event_types.all()) == []
    assert held == _as_stored(Availability.objects.filter(schedule=schedule).order_by("id"))
    assert [row.days for row in schedule.availability.all()] == [[1, 5], [0]]

    schedule_update(schedule=schedule, availability=[{"days": [2], **GOOD_ROW}])

    with django_assert_num_queries(0):
        held = _as_stored(schedule.availability.all())
    assert held == _as_stored(Availability.objects.filter(schedule=schedule).order_by("id"))
    assert len(held) == 1 and held[0][2] == Availability.mask_for([2])
    # A filter on the held rows still asks the database.
    assert schedule.availability.filter(days_mask=Availability.mask_for([2])).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_schedule_write_holds_the_owners_row_and_reads_their_default_as_it_stands():
    """The owner's default is decided under a lock on their row (the module's docstring): another
    session cannot take that row until the write commits, and the write decides on the default
    as committed, not as the caller's object remembers it."""
    owner = UserFactory()
    first = schedule_create(actor=owner, name="First", time_zone="UTC")
    stale = User.objects.get(pk=owner.pk)
    User.objects.filter(pk=owner.pk).update(default_schedule=None)  # as another request left it
    other = another_session(autocommit=True)
    try:
        with transaction.atomic():
            assert _lock_user(stale) is stale and stale.default_schedule_id is None
            with pytest.raises(psycopg.errors.LockNotAvailable):
                other.execute("SELECT 1 FROM accounts_user WHERE id = %s FOR UPDATE NOWAIT", [owner.pk])
        assert other.execute("SELECT 1 FROM accounts_user WHERE id = %s FOR UPDATE NOWAIT", [owner.pk]).fetchone()
    finally:
        other.close()

    second = schedule_create(actor=stale, name="Second", time_zone="UTC")
    assert User.objects.get(pk=owner.pk).default_schedule_id == second.pk != first.pk
    with pytest.raises(User.DoesNotExist), transaction.atomic():
        _lock_user(User(pk=owner.pk + 10_000))


@pytest.mark.django_db(transaction=True)
def test_a_create_locks_the_owners_row_with_its_insert():
    """The create's INSERT takes the owner's row lock itself (one statement, no `_lock_user` round
    trip): until it commits, no other session can lock the owner, so a concurrent create or delete
    of their default waits for it."""
    owner = UserFactory()
    other = another_session(autocommit=True)
    try:
        with transaction.atomic():
            schedule = schedule_create(actor=owner, name="First", time_zone="UTC")
            with pytest.raises(psycopg.errors.LockNotAvailable):
                other.execute("SELECT 1 FROM accounts_user WHERE id = %s FOR UPDATE NOWAIT", [owner.pk])
            assert other.execute("SELECT count(*) FROM scheduling_schedule").fetchone() == (0,)
        assert other.execute("SELECT 1 FROM accounts_user WHERE id = %s FOR UPDATE NOWAIT", [owner.pk]).fetchone()
        assert other.execute("SELECT default_schedule_id FROM accounts_user WHERE id = %s", [owner.pk]).fetchone() == (
            schedule.pk,
        )
    finally:
        other.close()
    stored = Schedule.objects.get(pk=schedule.pk)
    assert (stored.user_id, stored.name, stored.time_zone, stored.created_at) == (
        owner.pk,
        "First",
        "UTC",
        schedule.created_at,
    )


def test_a_create_for_an_owner_who_is_gone_raises_and_writes_nothing():
    gone = UserFactory.build(pk=10_000_000)
    before = snapshot()
    with pytest.raises(User.DoesNotExist):
        schedule_create(actor=gone, name="Nobody's", time_zone="UTC")
    assert snapshot() == before
