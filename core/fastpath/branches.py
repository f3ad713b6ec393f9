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
(core.pagination) bounds every branch alike; a query without an end reads each branch whole.

Two rules follow for everyone else. The statement depends on the query's slice, so it is
compiled per request (core.fastpath.shapes keeps no statement of a query that holds one). And it
must stand at the top of the query's WHERE, ANDed with the rest: it copies every other condition
into its branches (elsewhere it is a ValueError when the query is compiled).
"""

from dataclasses import dataclass

from django.contrib.postgres.fields import ArrayField
from django.db.models import BooleanField, Q, Value
from django.db.models.expressions import Expression
from django.db.models.lookups import Exact
from django.db.models.sql import Query
from django.db.models.sql.where import AND, WhereNode

from core.fastpath.compiled_queries import AnyOf
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


def one_of(name: str, values: list, output_field) -> Q:
    """`name = ANY(values)` as an array parameter: a condition PostgreSQL keeps as such."""
    return Q(AnyOf(name, Value(list(values), output_field=ArrayField(output_field))))


class AnyBranch(Expression):
    """The row is in one of `branches` (conditions on the query's model). `unordered`, if given, is
    the same rule in fewer branches, for a query with no order (a bounded COUNT): its branches need
    not each follow an index in an order, and fewer of them read fewer rows."""

    conditional = True

    def __init__(self, branches: list[Q | Branch], unordered: list[Q | Branch] | None = None):
        super().__init__(output_field=BooleanField())
        self.branches = list(branches)
        self.unordered = list(unordered) if unordered is not None else self.branches

    def resolve_expression(self, query=None, allow_joins=True, reuse=None, summarize=False, for_save=False):
        if not fast_paths():  # (`FAST_PATHS`) the plain form of the rule: an OR of the branches
            return self.plain(query.model).resolve_expression(query, allow_joins, reuse, summarize, for_save)
        return self.copy()  # the branches are resolved against the query when it is compiled

    def plain(self, model) -> Q:
        """The same rule as the ORM writes it: the row is one of a branch's rows (each branch a
        subquery of `model`, so that one through a reverse relation gives each row once)."""
        rule = Q(pk__in=[])
        for branch in self.unordered:
            condition = branch.condition if isinstance(branch, Branch) else branch
            rule |= Q(pk__in=model._default_manager.filter(condition).values("pk"))
        return rule

    def as_sql(self, compiler, connection):
        outer = compiler.query
        meta = outer.get_meta()
        order = _plain_order(outer)
        branches = self.branches if order and outer.high_mark is not None else self.unordered
        if not branches:
            return "FALSE", ()
        others = _other_conditions(outer.where)
        if outer.high_mark is None:
            order = None  # no end: the branches' union whole, in no order
        columns = [meta.pk.name, *(name for name, _ in order or () if name != meta.pk.name)]
        parts, params = [], []
        for branch in branches:
            inner = outer.chain(klass=Query)
            inner.explain_info = None  # an EXPLAIN of the query explains it whole, branches included
            inner.where = others.clone()
            condition, along = (branch.condition, branch.along) if isinstance(branch, Branch) else (branch, None)
            inner.add_q(condition)
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
            if outer.high_mark is not None:
                inner.set_limits(high=outer.high_mark)
            sql, branch_params = inner.get_compiler(connection=connection).as_sql()
            parts.append(f"({sql})")
            params.extend(branch_params)
        quote = connection.ops.quote_name
        column = f"{compiler.quote_name_unless_alias(outer.get_initial_alias())}.{quote(meta.pk.column)}"
        if outer.high_mark is None:
            return f"{column} IN ({' UNION ALL '.join(parts)})", tuple(params)
        if not order:
            ids = " UNION ALL ".join(parts)
        else:
            # The page's rows among the branches' (each row once: UNION).
            by = ", ".join(f"{quote(meta.get_field(name).column)}{' DESC' if desc else ''}" for name, desc in order)
            ids = f"SELECT {quote(meta.pk.column)} FROM ({' UNION '.join(parts)}) AS branches ORDER BY {by}"
            ids += f" LIMIT {int(outer.high_mark)}"
        # Gathered first (an InitPlan), at most the query's end per branch: the query then reads its
        # rows by primary key from them, whatever the planner guesses of its other conditions (left
        # to choose, it read every booking that starts after now and merged them with the ids).
        return f"{column} = ANY(ARRAY({ids}))", tuple(params)


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


def holds_branches(node) -> bool:
    """Whether a condition (a WHERE node, a lookup, an expression) holds an `AnyBranch`."""
    if isinstance(node, AnyBranch):
        return True
    children = getattr(node, "children", None)
    if children is None:
        children = node.get_source_expressions() if hasattr(node, "get_source_expressions") else ()
    return any(holds_branches(child) for child in children if child is not None)
