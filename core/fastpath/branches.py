"""A visibility rule of several branches (rows I organise, rows of my event types, rows I attend),
read so that a page costs its rows whatever the size of each branch.

`AnyBranch([Q(...), Q(...)])` is a condition on a queryset: the row is in at least one branch. It
is compiled against the query it stands in, when that query is compiled:

    "booking"."id" = ANY(ARRAY(SELECT id FROM (
        (SELECT id FROM booking WHERE <branch 1> AND <the query's other filters>
         ORDER BY <the query's order> LIMIT <the query's end>)
        UNION (… branch 2 …) …) ORDER BY <the query's order> LIMIT <the query's end>))

Each branch repeats the query's own filters, order and end (offset plus page), so it stops after
that many rows of its index, and the page is the first rows of the union: a row among the first
N of the whole list is among the first N of its branch. A COUNT bounded by a LIMIT
(core.pagination) counts the branches' union itself (`count_up_to`), the first branch alone when
it reaches the limit; a query without an end reads each branch whole.

A rule built by a `Template` (`AnyBranch.of`) is the same statement for every caller: it is
compiled once per form of the query it stands in (its other filters, its order, whether it has an
end) with a `Parameter` for each value, and each request fills in its own values, the query's other
filters' and its end. Any other rule is compiled with its values on each request.

It must stand at the top of the query's WHERE, ANDed with the rest: it copies every other condition
into its branches (elsewhere it is a ValueError when the query is compiled).
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections
from django.db.models import BooleanField, F, Q, Value
from django.db.models.expressions import Expression
from django.db.models.lookups import Exact
from django.db.models.sql import Query
from django.db.models.sql.where import AND, WhereNode

from core.fastpath.compiled_queries import AnyOf, Parameter
from core.fastpath.shapes import same_params
from core.fastpath.switch import fast_paths


@dataclass(frozen=True)
class Branch:
    """A branch read along an index whose first column is `along`: `condition` must hold it to one
    value as `along = ANY(array)` (`one_of`), not `along = value`. PostgreSQL drops an order by a
    column an equality fixes, and then chose among every index in the list's order by its estimate
    of where the branch's rows lie; a branch whose rows were all at the end of the primary key read
    a million other rows to find a page (0.5 s). Ordered by `along` first, only the branch's own
    index gives the order without a sort."""

    condition: Q
    along: str


@dataclass(frozen=True)
class Each:
    """The rows whose `along` is one of `values` (integers), as a branch per value in one: for each
    value, its rows read along the index on (`along`, the list's order) and stopping at the page's
    end (a lateral join over the array of values, so the statement is the same for any number of
    them). A first look at each value's first rows bounds them all (`AnyBranch`): a caller who runs
    200 event types reads about a page of their rows, not 200 pages, and none sorted whole."""

    along: str
    values: tuple
    output_field: object

    @property
    def condition(self) -> Q:
        values = self.values if isinstance(self.values, Parameter) else list(self.values)
        return one_of(self.along, values, self.output_field)


def one_of(name: str, values, output_field) -> Q:
    """`name = ANY(values)` as an array parameter: a condition PostgreSQL keeps as such. `values`
    may be a `Parameter` (a rule's `Template`)."""
    if isinstance(values, Parameter):
        return Q(AnyOf(name, values))
    return Q(AnyOf(name, Value(list(values), output_field=ArrayField(output_field))))


@dataclass(frozen=True, eq=False)  # compared and hashed as itself: its values may be lists
class Template:
    """A rule whose statement is the same for every caller: `build(values)` gives its branches and
    its unordered branches (as `AnyBranch` takes them) for these `values`, and given a `Parameter`
    for each value (of `fields`' output field) it gives the same statement with placeholders. The
    statement is then compiled once per process for each `key` (which must name everything else the
    branches' SQL depends on: which branches there are) and each form of the query it stands in,
    and every other request only fills in its values. Compiling the branches anew cost more than
    PostgreSQL took to answer a small caller's page."""

    key: tuple
    build: Callable[[dict], tuple[list, list]]
    values: dict
    fields: dict

    def branches(self) -> tuple[list, list]:
        return self.build(self.values)

    def placeholders(self) -> tuple[list, list]:
        return self.build({name: Parameter(name, field) for name, field in self.fields.items()})


class AnyBranch(Expression):
    """The row is in one of `branches` (conditions on the query's model). `unordered`, if given, is
    the same rule in fewer branches, for a query with no order (a bounded COUNT): its branches need
    not each follow an index in an order, and fewer of them read fewer rows. Or, with `template`
    (`AnyBranch.of`), the branches a `Template` builds, compiled once per form of the query."""

    conditional = True

    def __init__(
        self,
        branches: list[Q | Branch | Each] | None = None,
        unordered: list[Q | Branch | Each] | None = None,
        *,
        template: Template | None = None,
    ):
        super().__init__(output_field=BooleanField())
        self.template = template
        if template is None:
            self._branches = list(branches)
            self._unordered = list(unordered) if unordered is not None else self._branches
        else:
            self._branches = self._unordered = None  # built when first asked for

    @classmethod
    def of(cls, template: Template) -> "AnyBranch":
        return cls(template=template)

    def _built(self) -> None:
        if self._branches is None:
            branches, unordered = self.template.branches()
            self._branches, self._unordered = list(branches), list(unordered)

    @property
    def branches(self) -> list:
        self._built()
        return self._branches

    @property
    def unordered(self) -> list:
        self._built()
        return self._unordered

    def resolve_expression(self, query=None, allow_joins=True, reuse=None, summarize=False, for_save=False):
        if not fast_paths():  # (`FAST_PATHS`) the plain form of the rule: an OR of the branches
            return self.plain(query.model).resolve_expression(query, allow_joins, reuse, summarize, for_save)
        return self.copy()  # the branches are resolved against the query when it is compiled

    def plain(self, model) -> Q:
        """The same rule as the ORM writes it: the row is one of a branch's rows (each branch a
        subquery of `model`, so that one through a reverse relation gives each row once)."""
        rule = Q(pk__in=[])
        for branch in self.unordered:
            condition = branch.condition if isinstance(branch, (Branch, Each)) else branch
            rule |= Q(pk__in=model._default_manager.filter(condition).values("pk"))
        return rule

    def as_sql(self, compiler, connection):
        outer = compiler.query
        end = outer.high_mark
        if self.template is None:
            return _rule_sql(self.branches, self.unordered, compiler, connection, _Plain(end, {}))
        found = _templated(
            ("rule", self.template.key, end is None),
            outer,
            compiler.compile,
            connection,
            lambda others_params: self._compile_template(compiler, connection, others_params),
        )
        if found is None:
            return _rule_sql(self.branches, self.unordered, compiler, connection, _Plain(end, {}))
        sql, recipe, others_params = found
        return sql, _filled(recipe, others_params, end, self.template.values)

    def _compile_template(self, compiler, connection, others_params):
        branches, unordered = self.template.placeholders()
        return _rule_sql(branches, unordered, compiler, connection, _Recipe(others_params))


def _rule_sql(branches, unordered, compiler, connection, values) -> tuple[str, tuple]:
    """The rule's condition on `compiler`'s query. `values` writes its parameters: the values
    themselves (`_Plain`), or how each request's are found (`_Recipe`, a `Template`'s statement)."""
    outer = compiler.query
    meta = outer.get_meta()
    order = _plain_order(outer)
    end = outer.high_mark
    branches = branches if order and end is not None else unordered
    if not branches:
        return "FALSE", ()
    others = _other_conditions(outer.where)
    quote = connection.ops.quote_name
    column = f"{compiler.quote_name_unless_alias(outer.get_initial_alias())}.{quote(meta.pk.column)}"
    if end is None or not order:
        # No end: the branches' union whole; no order: each branch up to the end, in no order.
        parts, params = [], []
        for branch in branches:
            condition = branch.condition if isinstance(branch, (Branch, Each)) else branch
            sql, branch_params = _branch_sql(outer, others, condition, None, None, [meta.pk.name], None, connection)
            branch_params = values.branch(branch_params)
            parts.append(f"({sql})" if end is None else f"({sql} LIMIT %s)")
            params.extend(branch_params if end is None else (*branch_params, values.end(_END)))
        if end is None:
            return f"{column} IN ({' UNION ALL '.join(parts)})", tuple(params)
        return f"{column} = ANY(ARRAY({' UNION ALL '.join(parts)}))", tuple(params)
    columns = [meta.pk.name, *(name for name, _ in order if name != meta.pk.name)]
    multiple = len(branches) > 1 or any(isinstance(branch, Each) for branch in branches)
    bound = _bound_of(meta, order) if multiple else None
    by = ", ".join(f"{quote(meta.get_field(name).column)}{' DESC' if desc else ''}" for name, desc in order)
    pk = quote(meta.pk.column)
    # The end is a parameter throughout: the statement's text is the same for every page.
    parts, params, samples = [], [], []
    for index, branch in enumerate(branches):
        sql, branch_params = _read(outer, others, branch, order, columns, bound if index else None, connection, values)
        parts.append(f"({sql})")
        params.append((*branch_params, values.end(_END)))
        if bound is not None and isinstance(branch, Each) and branch.values:
            # A first look: each value's first rows, as many in all as the page's end. Their
            # row at the page's end (if they hold that many) bounds every branch too.
            sample, sample_params = _read(outer, others, branch, order, columns, None, connection, values)
            samples.append((f"({sample})", (*sample_params, values.end(_share_of(branch.values)))))
    if bound is None:
        ids = f"SELECT {pk} FROM ({' UNION '.join(parts)}) AS branches ORDER BY {by} LIMIT %s"
        all_params = [param for part in params for param in part]
        # Gathered first (an InitPlan), at most the query's end per branch: the query then reads
        # its rows by primary key from them, whatever the planner guesses of its other conditions
        # (left to choose, it read every booking that starts after now and merged them).
        return f"{column} = ANY(ARRAY({ids}))", (*all_params, values.end(_END))
    # The first branch is read first, and its row at the page's end bounds the others: no row
    # past it in the list's order can be among the page's, so every other branch reads from its
    # index only the rows up to there (and at most the page's end of them).
    ctes = [f"{FIRST} AS MATERIALIZED {parts[0]}"]
    cte_params = list(params[0])
    selected = ", ".join(quote(name) for name in bound.columns)
    ends = [f"(SELECT {selected} FROM {FIRST} ORDER BY {by} OFFSET %s LIMIT 1)"]
    for number, (sample, sample_params) in enumerate(samples):
        # Looked at only when the first branch ends before the page's end (it bounds no one).
        unbounded = f"NOT EXISTS (SELECT FROM {FIRST} OFFSET %s)"
        ctes.append(f"{SAMPLE}{number} AS MATERIALIZED (SELECT * FROM {sample} AS sample WHERE {unbounded})")
        cte_params.extend((*sample_params, values.end(_BEFORE_END)))
        ends.append(f"(SELECT {selected} FROM {SAMPLE}{number} ORDER BY {by} OFFSET %s LIMIT 1)")
    # The nearest of the ends found (none: no bound).
    ctes.append(f"{BOUND} AS (SELECT * FROM ({' UNION ALL '.join(ends)}) AS ends ORDER BY {by} LIMIT 1)")
    cte_params.extend([values.end(_BEFORE_END)] * len(ends))
    union = " UNION ".join([f"(SELECT * FROM {FIRST})", *parts[1:]])
    ids = f"WITH {', '.join(ctes)} SELECT {pk} FROM ({union}) AS branches ORDER BY {by} LIMIT %s"
    rest = [param for part in params[1:] for param in part]
    return f"{column} = ANY(ARRAY({ids}))", (*cte_params, *rest, values.end(_END))


# How a parameter follows from the query's end (a page's, or a COUNT's limit) and the rule's values.
def _END(end, values):
    return int(end)


def _BEFORE_END(end, values):
    return int(end) - 1


def _share_of(branch_values):
    """Each value's share of the end (rounded up): of an `Each` branch's first look."""
    if isinstance(branch_values, Parameter):
        name = branch_values.name
        return lambda end, values: -(-int(end) // len(values[name]))
    count = len(branch_values)
    return lambda end, values: -(-int(end) // count)


class _Plain:
    """A statement's parameters as values: `end`, and each branch's as the ORM compiled them."""

    def __init__(self, end, values: dict):
        self._end, self._values = end, values

    def end(self, how):
        return how(self._end, self._values)

    def branch(self, params):
        return list(params)

    def value(self, branch_values):
        return list(branch_values)


class _Computed:
    """A parameter of a template's statement that each request computes from its end and values."""

    __slots__ = ("how",)

    def __init__(self, how):
        self.how = how


class _NotTemplated(Exception):
    """The statement's parameters do not follow its template (its branches' statements do not
    start with the query's other conditions' parameters): it is compiled on every request."""


_OTHERS = object()  # in a template's parameters: the query's other conditions' parameters, in order


class _Recipe:
    """A template's parameters: `Parameter`s (the rule's values), `_Computed` ones (from the end),
    `_OTHERS` (the query's other conditions' parameters) and constants."""

    def __init__(self, others_params):
        self.others = tuple(others_params)

    def end(self, how):
        return _Computed(how)

    def branch(self, params):
        """A branch statement's parameters: the query's other conditions' first (it repeats them,
        `_branch_sql`), then the branch's own."""
        params = list(params)
        count = len(self.others)
        if not same_params(params[:count], self.others):
            raise _NotTemplated
        return [_OTHERS, *params[count:]] if count else params

    def value(self, branch_values):
        return branch_values if isinstance(branch_values, Parameter) else list(branch_values)


def _filled(recipe, others_params, end, values: dict) -> tuple:
    """A template's parameters for one request."""
    filled = []
    for item in recipe:
        if item is _OTHERS:
            filled.extend(others_params)
        elif type(item) is Parameter:
            filled.append(values[item.name])
        elif type(item) is _Computed:
            filled.append(item.how(end, values))
        else:
            filled.append(item)
    return tuple(filled)


# Templates compiled: (kind, template key, the query's form) -> (SQL, recipe), or None for a form
# whose statement does not follow its template. Bounded: a form per set of other filters.
_TEMPLATES: dict[tuple, tuple[str, list] | None] = {}
MAX_TEMPLATES = 512


def _templated(kind: tuple, outer: Query, compile_node, connection, compile_template):
    """A template's (SQL, recipe, the query's other conditions' parameters) for `outer`'s form, compiled
    the first time that form is seen (`compile_template(compiler, connection, others_params)`), or
    None when it cannot be a template (it is then compiled with its values on each request).

    The form is everything the statement's text depends on besides the template: the model, the
    database, the query's tables and joins, its other conditions' SQL and its order."""
    others = _other_conditions(outer.where)
    try:
        others_sql, others_params = compile_node(others)
    except FullResultSet:
        others_sql, others_params = "", ()
    except EmptyResultSet:
        return None
    joins = tuple(
        (alias, join.identity, getattr(join, "join_type", None), outer.alias_refcount[alias])
        for alias, join in outer.alias_map.items()
    )
    order = (tuple(str(term) for term in outer.order_by), outer.default_ordering, outer.standard_ordering)
    key = (*kind, outer.model, connection.alias, joins, others_sql, order)
    found = _TEMPLATES.get(key, _MISSING)
    if found is _MISSING:
        try:
            found = compile_template(others_params)
        except _NotTemplated:
            found = None
        if len(_TEMPLATES) < MAX_TEMPLATES:
            _TEMPLATES[key] = found
    if found is None:
        return None
    sql, recipe = found
    return sql, recipe, others_params


_MISSING = object()


@dataclass(frozen=True)
class BranchCount:
    """What `count_up_to` found: the rows counted (up to its limit), and when the first branch alone
    reached the limit, how to ask PostgreSQL's estimate of that branch's rows (else None)."""

    rows: int
    estimate: Callable[[], int] | None = None


def count_up_to(queryset, limit: int) -> BranchCount | None:
    """The rows `queryset` matches, counted up to `limit`, when an `AnyBranch` stands in its WHERE
    (None when none does, or with the switch off: the ORM's COUNT then).

    The branches' union is counted, not the rows it leads to: each branch repeats the query's other
    conditions, so the union's distinct ids are the rows the query matches, and no row is read
    again by primary key. The first branch is read first (gathered once, `MATERIALIZED`): when it
    alone holds `limit` rows, so does the union, and no other branch is read. The bookings a busy
    organizer organises answer their own COUNT from one index that way, where reading every branch
    to the limit and then each row by key cost ten times as much. Its estimate is then that branch's
    (an EXPLAIN of its statement, written already): at least the rows it holds, where the whole
    query's EXPLAIN cost as much again as the COUNT to build and plan."""
    query = queryset.query
    rule = next((_as_branch(child) for child in query.where.children if _is_branch(child)), None)
    if rule is None or not fast_paths() or query.is_sliced or query.combinator or query.distinct:
        return None
    outer = query.chain()
    outer.clear_ordering(force=True)
    database = connections[queryset.db]
    found = None
    if rule.template is not None:
        template = rule.template

        def compile_template(others_params):
            statement = _count_sql(outer, template.placeholders()[1], database, _Recipe(others_params))
            return None if statement is None else (statement[::2], statement[1::2])

        found = _templated(
            ("count", template.key), outer, outer.get_compiler(connection=database).compile, database, compile_template
        )
    if found is not None:
        (sql, first_sql), (recipe, first_recipe), others_params = found
        params = _filled(recipe, others_params, limit, template.values)
        first_params = _filled(first_recipe, others_params, limit, template.values)
    else:
        statement = _count_sql(outer, rule.unordered, database, _Plain(limit, {}))
        if statement is None:
            return BranchCount(0)
        sql, params, first_sql, first_params = statement
    with database.cursor() as cursor:
        cursor.execute(sql, params)
        rows, reached = cursor.fetchone()
    if not reached:
        return BranchCount(rows)
    return BranchCount(rows, lambda: _estimate(database, first_sql, first_params))


def _count_sql(outer: Query, unordered: list, database, values) -> tuple | None:
    """The bounded COUNT of `count_up_to` and the statement of its first branch (with their
    parameters, written by `values` as in `_rule_sql`), or None when the rule has no branch."""
    others = _other_conditions(outer.where)
    pk = outer.get_meta().pk
    parts, params = [], []
    for branch in unordered:
        condition = branch.condition if isinstance(branch, (Branch, Each)) else branch
        sql, branch_params = _branch_sql(outer, others, condition, None, None, [pk.name], None, database)
        parts.append(sql)
        params.append(values.branch(branch_params))
    if not parts:
        return None
    limit = values.end(_END)
    # A branch joined to a many-valued relation may hold an id twice: its own count is of distinct ids.
    counted = "COUNT(DISTINCT id)" if " JOIN " in parts[0] else "COUNT(*)"
    first = (
        f"WITH {FIRST} AS MATERIALIZED ({parts[0]} LIMIT %s), "
        f"{OWN} AS (SELECT {counted} AS rows FROM {FIRST} AS first (id))"
    )
    if len(parts) == 1:
        sql, all_params = f"{first} SELECT rows, rows >= %s FROM {OWN}", [*params[0], limit, limit]
    else:
        union = " UNION ".join([f"(SELECT * FROM {FIRST})", *(f"({part} LIMIT %s)" for part in parts[1:])])
        rest = [param for part in params[1:] for param in (*part, limit)]
        # Run only when the first branch holds fewer (an InitPlan is run when first asked for).
        every = f"(SELECT COUNT(*) FROM (SELECT 1 FROM ({union}) AS branches LIMIT %s) AS counted)"
        sql = f"{first} SELECT CASE WHEN rows >= %s THEN rows ELSE {every} END, rows >= %s FROM {OWN}"
        all_params = [*params[0], limit, limit, *rest, limit, limit]
    return sql, all_params, parts[0], params[0]


def _estimate(database, sql: str, params) -> int:
    """PostgreSQL's estimate of the rows of a statement (EXPLAIN: planned, not run)."""
    with database.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"])


def _as_branch(condition) -> "AnyBranch":
    return condition if isinstance(condition, AnyBranch) else condition.lhs


# The names of the first branch's rows, of each first look (`Each`) and of the bound in the statement.
FIRST, SAMPLE, BOUND = "branch_first", "branch_sample_", "branch_bound"
# The count of the first branch's rows in a bounded COUNT (`count_up_to`).
OWN = "branch_first_rows"
# The name of the values an `Each` branch runs over, and of its rows.
VALUES, ROWS = "branch_values", "branch_rows"


def _read(outer, others, branch, order, columns, bound, connection, values) -> tuple[str, list]:
    """The statement of one branch in the list's order, ending with `LIMIT %s` (its last parameter
    left to the caller); `values` writes its parameters (`_rule_sql`)."""
    if isinstance(branch, Each):
        condition = Q(_IsValue(branch.along))
        sql, params = _branch_sql(outer, others, condition, branch.along, order, columns, bound, connection)
        unnest = f"unnest(%s::bigint[]) AS {VALUES}(value)"
        sql = f"SELECT {ROWS}.* FROM {unnest} CROSS JOIN LATERAL ({sql} LIMIT %s) AS {ROWS}"
        return sql, [values.value(branch.values), *values.branch(params)]
    condition, along = (branch.condition, branch.along) if isinstance(branch, Branch) else (branch, None)
    sql, params = _branch_sql(outer, others, condition, along, order, columns, bound, connection)
    return f"{sql} LIMIT %s", values.branch(params)


class _IsValue(Expression):
    """`column = branch_values.value`: the row holds the value an `Each` branch is at."""

    conditional = True

    def __init__(self, name: str, column=None):
        super().__init__(output_field=BooleanField())
        self.name, self.column = name, column

    def resolve_expression(self, query=None, *args, **kwargs):
        return _IsValue(self.name, F(self.name).resolve_expression(query, *args, **kwargs))

    def as_sql(self, compiler, connection):
        column_sql, column_params = compiler.compile(self.column)
        return f"{column_sql} = {VALUES}.value", tuple(column_params)


@dataclass(frozen=True)
class _Bound:
    """The columns of a list's order (all, when they go the same way; else the first), by which
    the branches after the first are bounded."""

    names: tuple
    columns: tuple
    descending: bool
    beyond: tuple  # the SQL of a value past every other of each, in the order's direction


# Values past every other of a type, each way (ascending, descending).
_BEYOND = {
    "DateTimeField": ("'infinity'::timestamptz", "'-infinity'::timestamptz"),
    "DateField": ("'infinity'::date", "'-infinity'::date"),
    **{
        kind: ("9223372036854775807", "(-9223372036854775807 - 1)")
        for kind in (
            "AutoField",
            "BigAutoField",
            "SmallAutoField",
            "IntegerField",
            "BigIntegerField",
            "SmallIntegerField",
            "PositiveIntegerField",
            "PositiveBigIntegerField",
            "PositiveSmallIntegerField",
        )
    },
}


def _bound_of(meta, order: list[tuple[str, bool]] | None) -> _Bound | None:
    """The bound of the order's columns, if the first has one (a column never NULL, of a type with
    values past every other): all of them when they go the same way and each has one (rows alike
    in the first, as a bulk import's, are bounded too), else the first alone."""
    if not order:
        return None
    found = []
    for name, descending in order:
        field = meta.get_field(name)
        beyond = _BEYOND.get(field.get_internal_type())
        if beyond is None or field.null or descending != order[0][1]:
            break
        found.append((name, field.column, beyond[descending]))
    if not found:
        return None
    if len(found) < len(order):
        found = found[:1]
    names, columns, beyond = zip(*found, strict=True)
    return _Bound(names, columns, order[0][1], beyond)


class _UpToBound(Expression):
    """The row is not past the bound in the list's order: `(a, b) <= (bound's a, bound's b)`, a
    row comparison that the branch's index reads as a range."""

    conditional = True

    def __init__(self, bound: _Bound, columns=None):
        super().__init__(output_field=BooleanField())
        self.bound, self.columns = bound, columns

    def resolve_expression(self, query=None, *args, **kwargs):
        columns = [F(name).resolve_expression(query, *args, **kwargs) for name in self.bound.names]
        return _UpToBound(self.bound, columns)

    def as_sql(self, compiler, connection):
        quote = connection.ops.quote_name
        compiled = [compiler.compile(column) for column in self.columns]
        left = ", ".join(sql for sql, _ in compiled)
        right = ", ".join(
            f"COALESCE((SELECT {quote(column)} FROM {BOUND}), {beyond})"
            for column, beyond in zip(self.bound.columns, self.bound.beyond, strict=True)
        )
        operator = ">=" if self.bound.descending else "<="
        params = tuple(param for _, column_params in compiled for param in column_params)
        if len(compiled) == 1:
            return f"{left} {operator} {right}", params
        return f"({left}) {operator} ({right})", params


def _branch_sql(outer: Query, others: WhereNode, condition: Q, along, order, columns, bound, connection):
    """One branch's statement: the query's other conditions and the branch's `condition`, in the
    query's order led by the branch's index column `along` (if both are given), selecting
    `columns`; with no LIMIT."""
    inner = outer.chain(klass=Query)
    inner.explain_info = None  # an EXPLAIN of the query explains it whole, branches included
    inner.where = others.clone()
    inner.add_q(condition)
    if bound is not None:
        inner.add_q(Q(_UpToBound(bound)))
    if order and along:
        # The branch's index order: its column first (one value, so the same rows in the same
        # order), which only that index gives without a sort.
        first = "-" if order[0][1] else ""
        inner.clear_ordering(force=True)
        inner.add_ordering(f"{first}{along}", *(f"{'-' if desc else ''}{name}" for name, desc in order))
    inner.select_related = False
    inner.clear_select_clause()
    inner.add_fields(columns)
    inner.clear_limits()
    return inner.get_compiler(connection=connection).as_sql()


def _plain_order(query: Query) -> list[tuple[str, bool]] | None:
    """The query's order as (field name, descending) of its model's own concrete columns, or None
    when it has no order or another kind of one."""
    meta = query.get_meta()
    terms = query.order_by or (meta.ordering if query.default_ordering else ())
    order = []
    for term in terms:
        if not isinstance(term, str) or "__" in term or term in ("?", ""):
            return None
        name = term.lstrip("-")
        field = meta.pk if name == "pk" else meta.get_field(name)
        if not field.concrete or field.is_relation:
            return None
        order.append((field.name, term.startswith("-") != (not query.standard_ordering)))
    return order or None


def _other_conditions(where: WhereNode) -> WhereNode:
    """The query's conditions without the `AnyBranch` (which must be one of the ANDed conditions
    at the top of its WHERE)."""
    if where.connector != AND or where.negated:
        raise ValueError("AnyBranch must be ANDed with the query's other conditions.")
    others = where.create(connector=AND)
    for child in where.children:
        if _is_branch(child):
            continue
        if holds_branches(child):
            raise ValueError("AnyBranch must be ANDed with the query's other conditions.")
        others.children.append(child)
    return others


def _is_branch(condition) -> bool:
    """`AnyBranch` itself, or as the ORM files a filter by an expression: `Exact(AnyBranch, True)`."""
    if isinstance(condition, AnyBranch):
        return True
    return isinstance(condition, Exact) and isinstance(condition.lhs, AnyBranch) and condition.rhs is True


def planned_once_suits(where: WhereNode) -> bool:
    """Whether a query's statement may run under one generic plan (`compiled_queries.planned_once`):
    its rule of branches is a `Template`'s, whose branches each read their index whatever the
    values."""
    return any(_is_branch(child) and _as_branch(child).template is not None for child in where.children)


def holds_branches(node) -> bool:
    """Whether a condition (a WHERE node, a lookup, an expression) holds an `AnyBranch`."""
    if isinstance(node, AnyBranch):
        return True
    children = getattr(node, "children", None)
    if children is None:
        children = node.get_source_expressions() if hasattr(node, "get_source_expressions") else ()
    return any(holds_branches(child) for child in children if child is not None)
