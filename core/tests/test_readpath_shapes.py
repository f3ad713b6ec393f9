"""`core.fastpath.shapes`: a list's page and COUNT are compiled once per query shape and then run
with each request's values; every shape it does not know is read by the ORM as before. The rows
and totals are always the ORM's own."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F, Value
from django.db.models.functions import Lower
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import UserFactory
from core.fastpath import read_rows
from core.fastpath.compiled_queries import CompiledValues
from core.fastpath.rows import row_iterable
from core.fastpath.shapes import MAX_SHAPES, Shape, counted_once, same_params, shape_of
from payments.models import Payment
from payments.selectors import payment_list
from payments.serializers import PaymentSerializer
from payments.tests.factories import PaymentFactory
from scheduling.models import Booking
from scheduling.selectors.bookings import booking_list
from scheduling.serializers.bookings import BookingSerializer
from scheduling.tests.factories import BookingFactory

pytestmark = pytest.mark.django_db


def node(model, serializer_class):
    return row_iterable(model, serializer_class).node


def pks(rows) -> list[int]:
    return [row.pk for row in rows]


@pytest.fixture
def two_organizers():
    start = timezone.now().replace(microsecond=0) + timedelta(days=3)
    first, second = UserFactory(), UserFactory()
    for index in range(5):
        for organizer in (first, second):
            booking = BookingFactory(
                organizer=organizer,
                start_time=start + timedelta(hours=index, minutes=organizer.pk % 50),
                end_time=start + timedelta(hours=index, minutes=organizer.pk % 50 + 5),
            )
            PaymentFactory(booking=booking, success=index % 2 == 0)
    return first, second


def test_each_caller_reads_their_own_rows_through_one_kept_statement(two_organizers):
    first, second = two_organizers
    pages = node(Payment, PaymentSerializer).pages

    mine = pks(read_rows(payment_list(user=first), PaymentSerializer)[:3])
    before = len(pages.by_key)
    with CaptureQueriesContext(connection) as run:
        theirs = pks(read_rows(payment_list(user=second), PaymentSerializer)[:3])
        later = pks(read_rows(payment_list(user=second), PaymentSerializer)[3:10])

    ordered = Payment.objects.order_by("id").values_list("pk", flat=True)
    assert mine == list(ordered.filter(booking__organizer=first)[:3])
    assert theirs + later == list(ordered.filter(booking__organizer=second))
    assert len(pages.by_key) in (before, before + 1)  # the slice with an offset is a shape of its own
    assert all(statement is not None for statement in pages.by_key.values())
    assert run.captured_queries[0]["sql"].endswith(" LIMIT 3")
    assert run.captured_queries[1]["sql"].endswith(" LIMIT 7 OFFSET 3")


@pytest.mark.parametrize(
    "narrow",
    [
        lambda queryset: queryset,
        lambda queryset: queryset.filter(success=True),
        lambda queryset: queryset.filter(success=False, refunded=False),
        lambda queryset: queryset.filter(booking__start_time__gte=timezone.now() + timedelta(days=3, hours=2)),
        lambda queryset: queryset.filter(booking__organizer_id__in=[1, 2, 3]),
        lambda queryset: queryset.filter(booking__title__icontains="a%_"),  # its value is rewritten: not kept
        lambda queryset: queryset.filter(app__isnull=True),  # its value is in the SQL: a shape of its own
        lambda queryset: queryset.filter(booking__organizer_id__in=[]),  # matches nothing
        lambda queryset: queryset.exclude(pk__gt=F("booking_id")),
        lambda queryset: queryset.order_by("-booking__start_time", "id"),
        lambda queryset: queryset.order_by(Lower("uid")),  # an expression: the ORM's every time
        lambda queryset: queryset.annotate(one=Value(1)),  # an annotation: the ORM's every time
        lambda queryset: queryset.distinct(),
    ],
)
def test_rows_and_totals_are_the_orms_for_every_shape_and_value(two_organizers, narrow):
    first, second = two_organizers
    for _ in range(2):  # the first run keeps the statement, the second uses it
        for caller in (first, second):
            plain = narrow(Payment.objects.filter(booking__organizer=caller).order_by("id"))
            rows = read_rows(narrow(payment_list(user=caller)), PaymentSerializer)

            assert pks(rows[1:4]) == list(plain.values_list("pk", flat=True)[1:4])
            assert pks(rows) == list(plain.values_list("pk", flat=True))
            assert rows.count() == plain.count()


def test_the_kept_count_is_the_orms_count_for_each_callers_values(two_organizers):
    first, second = two_organizers
    counts = node(Payment, PaymentSerializer).counts
    sent = []

    def capture(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    assert read_rows(payment_list(user=first), PaymentSerializer).count() == 5
    assert read_rows(payment_list(user=first, success=False), PaymentSerializer).count() == 2
    with connection.execute_wrapper(capture):
        assert read_rows(payment_list(user=second), PaymentSerializer).count() == 5
        assert read_rows(payment_list(user=second, success=True), PaymentSerializer).count() == 3
        assert read_rows(payment_list(user=second, success=False), PaymentSerializer).count() == 2

    kept = {statement for statement in counts.by_key.values() if statement is not None}
    assert len(sent) == 3 and set(sent) <= kept
    assert all(sql.startswith('SELECT COUNT(*) AS "__count"') for sql in sent)


def test_a_rule_of_branches_is_one_statement_for_every_page(two_organizers):
    """The bookings' visibility (core.fastpath.branches) holds the page's end as a parameter: one
    statement is kept for its shape, and every page and count it answers is the ORM's."""
    first, second = two_organizers
    for caller in (first, second):
        for statuses, expected in ((None, 5), (["ACCEPTED"], 5), (["CANCELLED"], 0)):
            visible = booking_list(user=caller, statuses=statuses)
            assert shape_of(visible[:2]) is not None
            assert shape_of(visible[:2]).key == shape_of(visible[:4]).key != shape_of(visible[1:4]).key
            rows = read_rows(visible, BookingSerializer)
            own = Booking.objects.filter(organizer=caller, status__in=statuses or ["ACCEPTED"]).order_by("pk")
            assert rows.count() == expected == own.count()
            ids = list(own.values_list("pk", flat=True))
            for start, stop in ((0, 2), (0, 4), (1, 3), (2, 5), (0, 1)):
                assert pks(rows[start:stop]) == ids[start:stop]
            node = rows._iterable_class.node
            assert isinstance(node.pages.get(shape_of(rows[:2])), CompiledValues)  # kept, used by the pages after


def test_a_query_the_module_does_not_know_has_no_shape(two_organizers):
    first, _ = two_organizers
    queryset = payment_list(user=first)

    assert shape_of(queryset) is not None
    assert shape_of(queryset.values("id")) is None
    assert shape_of(queryset.annotate(one=Value(1))) is None
    assert shape_of(queryset.extra(select={"one": "1"})) is None
    assert shape_of(queryset.distinct()) is None
    assert shape_of(queryset.order_by(Lower("uid"))) is None
    assert shape_of(queryset.filter(booking__organizer_id__in=[])) is None
    assert shape_of(queryset[5:]) is None  # an offset without a limit
    assert shape_of(queryset.union(queryset)) is None


def test_shapes_differ_by_what_the_sql_says_and_not_by_the_values(two_organizers):
    first, second = two_organizers

    def key(queryset):
        return shape_of(queryset).key

    assert key(payment_list(user=first)) == key(payment_list(user=second))
    assert key(payment_list(user=first)[:10]) == key(payment_list(user=second)[:20])
    assert key(payment_list(user=first)[:10]) != key(payment_list(user=first)[10:20])  # an OFFSET
    assert key(payment_list(user=first)) != key(payment_list(user=first, success=True))
    assert key(payment_list(user=first, user_ids=[1])) != key(payment_list(user=first, user_ids=[1, 2]))
    assert shape_of(payment_list(user=first)[10:20]).limit == (10, 10)


def test_the_kept_statements_per_list_are_bounded(two_organizers, monkeypatch):
    first, _ = two_organizers
    pages = node(Payment, PaymentSerializer).pages
    monkeypatch.setattr(pages, "by_key", {})
    monkeypatch.setattr("core.fastpath.shapes.MAX_SHAPES", 3)

    for count in range(1, 7):  # a filter by N ids is a shape per N
        ids = list(range(1, count + 1))
        rows = read_rows(payment_list(user=first, user_ids=[first.pk, *ids]), PaymentSerializer)
        assert pks(rows) == list(
            Payment.objects.filter(booking__organizer=first).order_by("id").values_list("pk", flat=True)
        )

    assert len(pages.by_key) == 3
    assert MAX_SHAPES >= 100


def test_a_statement_whose_values_are_not_the_where_clauses_is_not_kept(two_organizers, monkeypatch):
    first, _ = two_organizers
    list_node = node(Payment, PaymentSerializer)
    monkeypatch.setattr(list_node.pages, "by_key", {})
    monkeypatch.setattr(list_node.counts, "by_key", {})
    queryset = read_rows(payment_list(user=first), PaymentSerializer)
    shape = shape_of(queryset)
    elsewhere = Shape(shape.key, (*shape.params, "a value from outside the WHERE clause"), shape.limit)

    assert list_node.page_statement(queryset, elsewhere) is None
    assert list_node.pages.by_key == {shape.key: None}
    assert pks(queryset) == pks(payment_list(user=first))  # read by the ORM from then on
    assert counted_once(queryset.all(), elsewhere) == (5, None)
    assert counted_once(queryset.all(), shape)[1].startswith('SELECT COUNT(*) AS "__count"')
    assert same_params([1, "a"], (1, "a")) and not same_params([1.0], (1,)) and not same_params([1], (1, 2))
