"""`core.fastpath.inserts`: the compiled INSERT writes, column for column, what `bulk_create` writes for
the same rows (defaults, `auto_now_add`, JSON with text beyond ASCII, a NULL foreign key), returns
the keys in row order, and with the switch off is the ORM's `bulk_create`."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import DataError, connection, transaction
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.fastpath.inserts import CompiledInsert, json_text, text_array
from notifications.models import EmailMessage, Kind
from scheduling.models import BookingStatus
from scheduling.tests.factories import BookingFactory

pytestmark = pytest.mark.django_db

EACH = ["role", "recipient", "locale", "time_zone", "context", "message_id"]
NOW = datetime(2026, 3, 29, 0, 59, 59, 123456, tzinfo=UTC)


@pytest.fixture
def frozen_now(monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: NOW)


@pytest.fixture
def bulk_creates(monkeypatch) -> list:
    """The objects of each `bulk_create` call, by type."""
    created = []
    bulk_create = QuerySet.bulk_create

    def counted(queryset, objects, *args, **kwargs):
        created.append([type(instance) for instance in objects])
        return bulk_create(queryset, objects, *args, **kwargs)

    monkeypatch.setattr(QuerySet, "bulk_create", counted)
    return created


def written(ids: list[int]) -> list[dict]:
    """Every column of the rows, as PostgreSQL has them (the JSON as jsonb's text), in `ids` order."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.*, m.context::text AS context_text FROM notifications_emailmessage m "
            "JOIN unnest(%s::bigint[]) WITH ORDINALITY AS wanted(id, position) USING (id) ORDER BY position",
            [ids],
        )
        names = [column.name for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def rows(count: int, booking, tag: str) -> tuple[dict, dict]:
    each = {
        "role": ["attendee", "guest", "organizer"][:count],
        "recipient": [f"person{index}@example.org" for index in range(count)],
        # What an array's text form must escape or quote: quotes, backslashes, braces, commas,
        # blanks, the word NULL, nothing at all.
        "locale": ["de", 'p"t\\BR', "NULL"][:count],
        "time_zone": ["Europe/Berlin", "{a, b}", " "][:count],
        "context": [
            {
                "title": "Café über Straße 🗓",
                "recipientName": name,
                "attendees": [{"name": "José"}],
                "n": 10**15,
                "said": 'a "quote", a \\ and {braces}',
            }
            for name in ["Zoë", "Renée", None][:count]
        ],
        "message_id": [f"<{tag}-{index}@example.org>" for index in range(count)],
    }
    every = {
        "booking_id": booking.pk if booking is not None else None,
        "organizer_id": 2**40,
        "kind": Kind.SCHEDULED,
        "next_attempt_at": NOW + timedelta(seconds=30),
    }
    return each, every


def bulk_created(count: int, each: dict, every: dict) -> list[int]:
    objects = [
        EmailMessage(**every, **{name: values[index] for name, values in each.items()}) for index in range(count)
    ]
    return [instance.pk for instance in EmailMessage.objects.bulk_create(objects)]


@pytest.mark.parametrize("count", [1, 3])
@pytest.mark.parametrize("with_booking", [True, False])
def test_the_compiled_insert_writes_what_bulk_create_writes(settings, frozen_now, bulk_creates, count, with_booking):
    settings.FAST_PATHS = True
    booking = BookingFactory() if with_booking else None
    compiled = CompiledInsert(EmailMessage, each=EACH)

    each, every = rows(count, booking, "compiled")
    with CaptureQueriesContext(connection) as captured:
        ids = compiled.insert(count, each=each, every=every)
    assert bulk_creates == []
    plain_each, plain_every = rows(count, booking, "plain")
    plain_ids = bulk_created(count, plain_each, plain_every)

    assert len(captured.captured_queries) == 1
    ours, theirs = written(ids), written(plain_ids)
    assert [row["recipient"] for row in ours] == each["recipient"]  # the keys in row order
    for mine, plain in zip(ours, theirs, strict=True):
        assert mine.pop("message_id").replace("compiled", "plain") == plain.pop("message_id")
        assert mine.pop("id") != plain.pop("id")
        assert mine == plain
        assert mine["created_at"] == NOW and mine["status"] == "pending" and mine["attempts"] == 0
        assert mine["last_error"] == "" and mine["sent_at"] is None
        assert mine["booking_id"] == (booking.pk if booking else None)
    assert json.loads(ours[0]["context_text"])["title"] == "Café über Straße 🗓"
    assert [row["locale"] for row in ours] == each["locale"] and [row["time_zone"] for row in ours] == each["time_zone"]


def test_with_the_switch_off_it_is_the_orms_bulk_create(settings, frozen_now, bulk_creates):
    settings.FAST_PATHS = False
    compiled = CompiledInsert(EmailMessage, each=EACH)
    each, every = rows(3, None, "off")

    with CaptureQueriesContext(connection) as captured:
        ids = compiled.insert(3, each=each, every=every)

    assert bulk_creates == [[EmailMessage] * 3] and len(captured.captured_queries) == 1
    assert [row["recipient"] for row in written(ids)] == each["recipient"]
    assert compiled.insert(0, each={}, every={}) == []


def test_text_array_is_read_back_as_the_same_texts():
    values = ['a "b" c', "back\\slash", "{x,y}", "NULL", "", " ", "ü🗓", None]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[]", [text_array(values)])
        assert cursor.fetchone()[0] == values


def test_json_text_writes_a_choices_member_with_orjson(monkeypatch):
    """A booking's status is a `TextChoices` member: its value, without the slow way round."""
    monkeypatch.setattr(json, "dumps", lambda *args, **kwargs: pytest.fail("json.dumps was asked"))
    assert json_text({"kind": Kind.SCHEDULED, "status": BookingStatus.ACCEPTED}) == (
        '{"kind":"scheduled","status":"ACCEPTED"}'
    )


def test_json_text_is_the_document_json_dumps_writes():
    for value in ({"a": "é", "b": [1, 2.5, None, True]}, {1: "int key"}, {"big": 2**70}, Kind.SCHEDULED, []):
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::jsonb = %s::jsonb", [json_text(value), json.dumps(value)])
            assert cursor.fetchone() == (True,)
    assert json_text(None) is None
    with pytest.raises(TypeError):
        json_text({"when": NOW})  # as JSONField refuses it


@pytest.mark.parametrize("column", ["role", "kind"])  # one value per row; one for every row
def test_a_value_too_long_for_its_column_is_refused_as_the_orm_refuses_it(settings, column):
    settings.FAST_PATHS = True
    each, every = rows(1, None, "long")
    if column in each:
        each[column] = ["x" * 11]  # varchar(10)
    else:
        every[column] = "x" * 21  # varchar(20)
    with pytest.raises(DataError), transaction.atomic():
        CompiledInsert(EmailMessage, each=EACH).insert(1, each=each, every=every)
    with pytest.raises(DataError), transaction.atomic():
        bulk_created(1, each, every)
