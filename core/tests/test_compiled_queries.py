"""`core.fastpath.compiled_queries`: a queryset compiled once and run with each call's values gives what the queryset
itself gives, in one query; hand-written rows become the same instances."""

import json

import pytest
from django.db import connection
from django.db.models import Q

from accounts.models import User
from core.fastpath.compiled_queries import AnyOf, CompiledQuery, CompiledValues, Parameter, instances, row_layout
from scheduling.models import EventType, Schedule
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db


def field_values(instance) -> list:
    return [getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields]


def event_types(title, owner_id=None):
    queryset = EventType.objects.select_related("owner", "schedule__user").filter(title=title)
    return queryset.filter(Q(owner=owner_id) | Q(hidden=False)) if owner_id is not None else queryset


def test_the_compiled_sql_is_the_querysets_own():
    compiled = CompiledQuery(
        event_types(Parameter("title", EventType._meta.get_field("title")), Parameter("owner_id", User._meta.pk))
    )

    sql, params = event_types("Intro", 987654).query.sql_with_params()

    assert compiled.sql.replace("(%s)", "%s") == sql  # the ORM puts an expression in parentheses
    assert [getattr(param, "name", param) for param in compiled.params] == [
        {"Intro": "title", 987654: "owner_id"}.get(param, param) for param in params
    ]


def test_each_run_takes_its_own_values_and_builds_what_the_queryset_builds(django_assert_num_queries):
    compiled = CompiledQuery(event_types(Parameter("title", EventType._meta.get_field("title"))))
    intro, demo = EventTypeFactory(title="Intro"), EventTypeFactory(title="Demo", schedule=None)

    with django_assert_num_queries(2):
        found_intro, found_demo = compiled.first(title="Intro"), compiled.first(title="Demo")
        related = (found_intro.owner, found_intro.schedule.user, found_demo.owner, found_demo.schedule)

    expected = event_types("Intro").get()
    assert (found_intro.pk, found_demo.pk) == (intro.pk, demo.pk)
    assert type(found_intro) is EventType and type(related[1]) is User and related[3] is None
    assert field_values(found_intro) == field_values(expected)
    assert field_values(related[0]) == field_values(expected.owner)
    assert field_values(found_intro.schedule) == field_values(expected.schedule)
    assert field_values(related[1]) == field_values(expected.schedule.user)
    assert not found_intro._state.adding and found_intro.schedule._state.db == "default"
    assert compiled.first(title="Absent") is None


def test_a_run_without_a_value_for_a_parameter_is_refused():
    compiled = CompiledQuery(event_types(Parameter("title", EventType._meta.get_field("title"))))

    with pytest.raises(TypeError, match="title"):
        compiled.first(name="Intro")


def test_a_hand_written_row_of_concrete_columns_becomes_the_orms_instances():
    schedule = ScheduleFactory()
    layouts = (row_layout(Schedule), row_layout(User))
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {layouts[0].columns('schedule')}, {layouts[1].columns('person')}"
            f" FROM {quote(Schedule._meta.db_table)} schedule JOIN {quote(User._meta.db_table)} person"
            " ON person.id = schedule.user_id WHERE schedule.id = %s",
            [schedule.pk],
        )
        found, user = instances(cursor.fetchone(), *layouts)

    assert field_values(found) == field_values(Schedule.objects.get(pk=schedule.pk))
    assert field_values(user) == field_values(User.objects.get(pk=schedule.user_id))
    assert not found._state.adding and not user._state.adding


def test_compiled_values_are_the_querysets_rows_converters_applied(django_assert_num_queries):
    from payments.models import Payment
    from payments.tests.factories import PaymentFactory

    PaymentFactory(currency="usd", data={"charge": "ch_1", "nested": [1, None]})
    PaymentFactory(currency="eur", data={})
    currency = Parameter("currency", Payment._meta.get_field("currency"))
    compiled = CompiledValues(Payment.objects.filter(currency=currency).order_by("id").values_list("uid", "data"))

    with django_assert_num_queries(1):
        rows = compiled.rows(currency="usd")

    assert rows == list(Payment.objects.filter(currency="usd").order_by("id").values_list("uid", "data"))
    assert rows[0][1] == {"charge": "ch_1", "nested": [1, None]}  # the JSON column decoded
    with pytest.raises(TypeError, match="currency"):
        compiled.rows()


def test_any_of_is_one_statement_for_lists_of_any_length():
    schedules = ScheduleFactory.create_batch(3)
    keys = Parameter("keys", Schedule._meta.pk)
    compiled = CompiledValues(Schedule.objects.filter(AnyOf("id", keys)).order_by("id").values_list("id"))

    assert compiled.rows(keys=[schedules[0].pk, schedules[2].pk]) == [(schedules[0].pk,), (schedules[2].pk,)]
    assert compiled.rows(keys=[]) == []
    assert compiled.rows(keys=[schedule.pk for schedule in schedules]) == [(schedule.pk,) for schedule in schedules]
    assert "= ANY(%s)" in compiled.sql


def test_all_gives_every_instance_in_the_querysets_order():
    EventTypeFactory(title="Intro"), EventTypeFactory(title="Intro"), EventTypeFactory(title="Demo")
    compiled = CompiledQuery(event_types(Parameter("title", EventType._meta.get_field("title"))).order_by("id"))

    found = compiled.all(title="Intro")

    assert [field_values(item) for item in found] == [
        field_values(item) for item in event_types("Intro").order_by("id")
    ]
    assert compiled.all(title="None such") == []


@pytest.mark.parametrize(
    "document",
    [
        {},
        {"nested": {"list": [1, 2.5, -0.0, None, True, "ü ✓ 😀"], "empty": []}},
        {"big": 123456789012345678901234567890, "small": -(2**63), "float": 1e300, "tiny": 5e-324},
        {"order": 1, "kept": 2, "as": 3, "stored": 4},
        [1, "two", {"three": 3}],
        "a string",
        12345678901234567890123,  # past 64 bits: an int, as the standard library reads it
        {"u64": 18446744073709551615, "past": 18446744073709551616, "digits": "123456789012345678901234"},
        # below -2**63 with 19 digits: orjson would read these as floats
        {"below": -9223372036854775809, "nineteen": [-9999999999999999999], "text": "-1234567890123456789"},
        {"floats": [0.1, 0.30000000000000004, 1.7976931348623157e308, -0.0, 123456789.123456789123, 3e5]},
        {"text": 'quotes " and \\ and \u00e9 and \n', "same key": 1},
    ],
)
def test_json_columns_are_read_as_the_orm_reads_them(document):
    from scheduling.models import Booking
    from scheduling.tests.factories import BookingFactory

    booking = BookingFactory(metadata=document)
    compiled = CompiledValues(
        Booking.objects.filter(pk=Parameter("pk", Booking._meta.pk)).values_list("metadata", "responses")
    )

    (row,) = compiled.rows(pk=booking.pk)

    expected = Booking.objects.filter(pk=booking.pk).values_list("metadata", "responses").get()
    assert row == expected
    # Written out, so that an int read as an equal float (-1e19 == -10**19) differs too.
    assert json.dumps(row) == json.dumps(expected)


def test_statements_run_together_give_what_each_gives_alone_and_are_each_counted():
    from django.db import DatabaseError, transaction
    from django.test.utils import CaptureQueriesContext

    from core.fastpath.compiled_queries import rows_together

    schedules = [ScheduleFactory(name=f"Together {index}") for index in range(3)]
    by_pk = CompiledValues(Schedule.objects.filter(pk=Parameter("pk", Schedule._meta.pk)).values_list("id", "name"))
    by_keys = CompiledValues(
        Schedule.objects.filter(AnyOf("id", Parameter("keys", Schedule._meta.pk))).order_by("id").values_list("name")
    )
    runs = [(by_pk, {"pk": schedules[0].pk}), (by_keys, {"keys": [s.pk for s in schedules]}), (by_pk, {"pk": -1})]

    with CaptureQueriesContext(connection) as sent:
        together = rows_together(runs)

    assert together == [statement.rows(**values) for statement, values in runs]
    assert together[0] == [(schedules[0].pk, "Together 0")] and together[2] == []
    assert len(sent.captured_queries) == 3
    with transaction.atomic():  # inside a transaction too, as a write's answer may be read
        assert rows_together(runs) == together
    broken = CompiledValues(Schedule.objects.filter(pk=Parameter("pk", Schedule._meta.pk)).values_list("id"))
    broken.sql = broken.sql.replace("SELECT", "SELEKT", 1)
    with pytest.raises(DatabaseError), transaction.atomic():
        rows_together([(by_pk, {"pk": schedules[0].pk}), (broken, {"pk": 1})])
    assert rows_together(runs) == together  # the connection is usable afterwards
