"""`AnyBranch` (core.fastpath.branches) answers what one OR of its branches answers: every page,
in every order, with any offset and filter, and each row once when it is in several branches."""

import copy
from datetime import timedelta

import pytest
from django.db import DataError, connection
from django.db.models import BigIntegerField, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from core.fastpath.branches import AnyBranch, Branch, Each, _as_branch, _is_branch, count_up_to, one_of
from core.fastpath.compiled_queries import planned_once
from scheduling.models import Booking, BookingStatus, EventType
from scheduling.tests.factories import BookingFactory, EventTypeFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows():
    """Bookings seen as organizer, as event type owner, as attendee, and through two of these."""
    caller, other = UserFactory(email="caller@example.org"), UserFactory()
    mine = EventTypeFactory(owner=caller)
    start = timezone.now() + timedelta(days=2)
    made = []
    for index in range(12):
        organizer = caller if index % 3 else other
        event_type = mine if index % 2 else None
        attendees = [{"email": "caller@example.org"}] if index % 5 == 0 else [{}]
        status = BookingStatus.CANCELLED if index % 4 == 0 else BookingStatus.ACCEPTED
        made.append(
            BookingFactory(
                organizer=organizer,
                event_type=event_type,
                attendees=attendees,
                status=status,
                start_time=start - timedelta(hours=index * (-1) ** index),
                end_time=start - timedelta(hours=index * (-1) ** index) + timedelta(minutes=30),
            )
        )
    BookingFactory(organizer=other)  # seen through no branch
    branches = [Q(organizer=caller), Q(event_type=mine), Q(attendees__email="caller@example.org")]
    return branches


@pytest.fixture
def indexed(rows):
    """The same rule as `rows`, in the branches a visibility rule uses: the organizer along its
    index (read first, it bounds the others), each of several event types, the attendees' rows."""
    caller = Booking.objects.filter(rows[0]).first().organizer
    mine = EventType.objects.get(owner=caller)
    unused = EventTypeFactory(owner=caller)  # no bookings: a value of `Each` with no rows
    key = BigIntegerField()
    return [
        Branch(one_of("organizer_id", [caller.pk], key), along="organizer_id"),
        Each("event_type_id", (mine.pk, unused.pk), key),
        Q(pk__in=Booking.objects.filter(rows[2]).values("pk")),
    ]


ORDERS = [("id",), ("-id",), ("start_time", "id"), ("-created_at", "-id")]


def or_and_branches(rows, rule, order, status):
    """The bookings of `rule` in `order` (with `status`, if given), and the ids of one OR of
    `rows`' branches in that order, which they must be."""
    plain = Booking.objects.filter(pk__in=Booking.objects.filter(rows[0] | rows[1] | rows[2]).values("pk"))
    branched = Booking.objects.filter(rule)
    if status is not None:
        plain, branched = plain.filter(status=status), branched.filter(status=status)
    plain, branched = plain.order_by(*order), branched.order_by(*order)
    expected = list(plain.values_list("pk", flat=True))
    assert len(expected) >= 3
    assert list(branched.values_list("pk", flat=True)) == expected
    return branched, expected


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("status", [None, BookingStatus.CANCELLED])
def test_every_slice_is_the_or_of_the_branches(rows, order, status):
    rule = AnyBranch(rows[:2] + [Q(pk__in=Booking.objects.filter(rows[2]).values("pk"))])
    branched, expected = or_and_branches(rows, rule, order, status)
    for start in range(len(expected)):
        for size in (1, 2, 5):
            assert list(branched[start : start + size].values_list("pk", flat=True)) == expected[start : start + size]
    assert branched[:3].count() == len(expected[:3])
    assert branched.order_by()[:100].count() == len(expected)
    assert branched.count() == len(expected)


ALL_ORDERS = [*ORDERS, ("-start_time", "-id"), ("created_at", "id"), ("-updated_at", "-id"), ("end_time", "id")]


@pytest.mark.parametrize("order", ALL_ORDERS)
@pytest.mark.parametrize("status", [None, BookingStatus.CANCELLED])
def test_indexed_branches_answer_the_same_and_each_page_in_one_text(rows, indexed, order, status):
    branched, expected = or_and_branches(rows, AnyBranch(indexed), order, status)
    texts = set()
    for start in range(len(expected)):
        for size in (1, 2, 5):
            page = branched[start : start + size]
            assert list(page.values_list("pk", flat=True)) == expected[start : start + size]
            sql, params = page.query.sql_with_params()
            # The page's end is a parameter: one statement for every page of the same offset kind.
            texts.add((sql.removesuffix(f" OFFSET {start}").removesuffix(f" LIMIT {size}"), start > 0))
            assert start + size in params
    assert len(texts) == 2
    assert branched.order_by()[:100].count() == len(expected)


def test_it_must_be_anded_with_the_other_conditions(rows):
    queryset = Booking.objects.filter(Q(AnyBranch(rows[:2])) | Q(title="x"))
    with pytest.raises(ValueError, match="ANDed"):
        list(queryset[:2])


@pytest.mark.parametrize("first", [0, 2])  # the organizer's branch first, or the attendees' (a join)
@pytest.mark.parametrize("status", [None, BookingStatus.CANCELLED])
def test_a_bounded_count_counts_each_row_once_and_stops_at_its_limit(rows, indexed, first, status):
    """`count_up_to` (a list's `total`) counts the branches' union: a row in two branches once,
    and never more than the limit, whichever branch comes first (one joined to a many-valued
    relation counts distinct ids)."""
    unordered = [rows[first], *(branch for index, branch in enumerate(rows) if index != first)]
    branched = Booking.objects.filter(AnyBranch(indexed, unordered=unordered))
    if status is not None:
        branched = branched.filter(status=status)
    _, expected = or_and_branches(rows, AnyBranch(indexed), ("id",), status)
    for limit in range(1, len(expected) + 3):
        counted = count_up_to(branched.order_by("-start_time"), limit)
        assert counted.rows == min(limit, len(expected)), limit


def test_a_first_branch_that_reaches_the_limit_is_the_whole_count(rows):
    """When the first branch alone holds the limit, the other branches are not read: the statement
    answers from the first one's rows (EXPLAIN ANALYZE: the union's subplan never runs)."""
    caller = Booking.objects.filter(rows[0]).first().organizer
    organised = Booking.objects.filter(organizer=caller).count()
    branched = Booking.objects.filter(AnyBranch(rows))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE scheduling_booking")  # the estimate below is of these rows, whatever ran before
    with CaptureQueriesContext(connection) as captured:
        counted = count_up_to(branched, organised)
    assert counted.rows == organised
    (statement,) = captured.captured_queries
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement['sql']}")
        plan = cursor.fetchone()[0][0]["Plan"]
    runs = {
        node["Subplan Name"]: node["Actual Loops"]
        for node in plan["Plans"]
        if node.get("Subplan Name", "").startswith("InitPlan")
    }
    assert list(runs.values()) == [0], runs  # the union of the branches never ran
    # Above the limit, the estimate is that branch's: PostgreSQL's guess at the caller's own rows.
    assert 1 <= counted.estimate() <= 10 * organised
    # One more than the first branch holds: the union is counted, and has no branch's estimate.
    counted = count_up_to(branched, organised + 1)
    assert (counted.rows, counted.estimate) == (organised + 1, None)


def test_without_branches_or_with_the_switch_off_the_orm_counts(rows, settings):
    assert count_up_to(Booking.objects.filter(rows[0]), 5) is None
    settings.FAST_PATHS = False
    assert count_up_to(Booking.objects.filter(AnyBranch(rows)), 5) is None


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"statuses": ["CANCELLED"]},
        {"attendee_emails": ("caller@example.org",)},
        {"order_by": ("-start_time", "-id")},
        {"event_type_ids": [0]},
    ],
)
def test_a_template_compiles_once_to_what_its_values_compile_to(rows, filters):
    """`booking_visibility` is a `Template`: its statement is compiled once per form of the list
    and filled with each caller's values. Every slice and its COUNT give the rows the same rule
    gives compiled with the values (its branches built from them), for callers with and without
    event types, and the second caller of a form compiles no branch."""
    from scheduling.selectors.bookings import booking_list

    caller = Booking.objects.filter(rows[0]).first().organizer
    other = Booking.objects.exclude(organizer=caller).first().organizer  # runs no event type
    if filters.get("event_type_ids"):
        filters = {
            **filters,
            "event_type_ids": list(EventType.objects.filter(owner=caller).values_list("pk", flat=True)),
        }
    for user in (caller, other, caller):
        templated = booking_list(user=user, **filters)
        rule = the_rule(templated)
        assert rule.template is not None
        plain = templated.all()
        plain.query.where.children = [
            with_rule(child, AnyBranch(*rule.template.branches())) if _is_branch(child) else child
            for child in plain.query.where.children
        ]
        for part in (slice(None, 3), slice(2, 7), slice(None, 40), slice(None)):
            expected = list(plain.values_list("pk", flat=True)[part])
            assert list(templated.values_list("pk", flat=True)[part]) == expected, (user, part)
        for limit in (1, 2, 5, 100):
            assert count_up_to(templated, limit).rows == count_up_to(plain, limit).rows, (user, limit)
        assert count_up_to(templated, 100).rows == plain.count()
    # Once compiled, a form is filled in: no branch is built for the next caller's page or COUNT.
    templated = booking_list(user=other, **filters)
    rule = the_rule(templated)
    list(templated[:3])
    count_up_to(templated, 5)
    assert rule._branches is None


def the_rule(queryset) -> AnyBranch:
    (rule,) = [_as_branch(child) for child in queryset.query.where.children if _is_branch(child)]
    return rule


def with_rule(condition, rule: AnyBranch):
    """The WHERE's condition of an `AnyBranch` (itself, or the ORM's `Exact(rule, True)`) with `rule`
    in its place."""
    if isinstance(condition, AnyBranch):
        return rule
    replaced = copy.copy(condition)
    replaced.lhs = rule
    return replaced


@pytest.mark.django_db(transaction=True)
def test_a_templated_page_runs_under_its_generic_plan_and_leaves_the_session_as_it_was(client):
    """Outside a transaction (as a request reads), the page of a templated rule runs under its
    prepared statement's generic plan (`planned_once`): `SET LOCAL` in the implicit transaction of
    one pipeline, so the session's setting is untouched afterwards, no BEGIN or COMMIT is sent, and
    the rows are the ORM's."""
    caller = UserFactory(email="planned@example.org")
    made = sorted(BookingFactory(organizer=caller).pk for _ in range(4))
    BookingFactory()  # someone else's
    headers = {"authorization": f"Bearer {ApiKeyFactory(user=caller).raw_key}"}
    for _ in range(6):  # past psycopg's prepare threshold
        with CaptureQueriesContext(connection) as statements:
            answer = client.get("/v1/bookings?take=3", headers=headers)
        assert answer.status_code == 200
        assert [booking["id"] for booking in answer.json()["bookings"]] == made[:3]
        sent = [statement["sql"] for statement in statements.captured_queries]
        assert "SET LOCAL plan_cache_mode = force_generic_plan" in sent
        assert not {"BEGIN", "COMMIT"} & set(sent)
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "auto"
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE 'SELECT %%' AND statement LIKE '%%branch_first%%'"
        )
        ((generic, custom),) = cursor.fetchall()
    assert generic >= 3 and custom == 0


@pytest.mark.django_db(transaction=True)
def test_a_page_that_fails_under_its_generic_plan_leaves_the_session_as_it_was():
    """A statement that fails in `planned_once`'s pipeline rolls its implicit transaction back at
    the Sync: the error is the statement's, the setting is gone with it, and the connection reads
    on (no transaction left open or aborted)."""
    with pytest.raises(DataError, match="division by zero"):
        planned_once(connection, "SELECT 1 / %s", [0])
    assert connection.get_autocommit() and not connection.in_atomic_block
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "auto"
        cursor.execute("SELECT 2")
        assert cursor.fetchone()[0] == 2
    assert planned_once(connection, "SELECT current_setting('plan_cache_mode'), %s::int", [3]) == [
        ("force_generic_plan", 3)
    ]
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "auto"
