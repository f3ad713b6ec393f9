"""The SQL of a list's page and of its COUNT, compiled once per query shape.

Every GET builds its queryset anew (the selector, the declared filters, the page's slice), and
the ORM compiled that queryset again on every request: for `GET /v1/payments?take=100` the page's
`values_list()` and its compilation cost more CPU than PostgreSQL took to answer it
(docs/benchmarks.md, "Profiling and what changed"). Two requests of the same list differ only in
their values (the caller, a filter's value, the page), and the statement around those values is
the same. So:

- `shape_of(queryset)` compiles only the WHERE clause (a few lookups) and keys the statement by
  everything its text depends on: the model, the tables and joins (with their kinds and reference
  counts), the WHERE clause's SQL, the order and whether the query is sliced. Its values are the
  WHERE clause's parameters, as the ORM compiles them, and the slice as two more parameters
  (`LIMIT %s OFFSET %s`).
- A WHERE clause holding a visibility rule of branches (core.fastpath.branches) is compiled
  against its query's order and slice, and its text depends only on them (the order is in the key,
  and so is whether the query has an end; the end itself is one of its parameters), so it is a
  shape like any other; its statement is compiled with the slice, which is then cut off.
- The first request of a shape compiles the statement through the ORM as before and keeps it only
  if the ORM's parameters are exactly the WHERE clause's (each of the same type and equal). Any
  other shape (an annotation, `extra()`, `distinct()`, a union, an expression in the order, a
  clause that compiles to nothing, a statement whose parameters come from elsewhere) is read by
  the ORM on every request, as before.

The statement is the ORM's own text; only when it is built changes.
"""

from dataclasses import dataclass

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql import Query

# The Query attributes a shape may set (its key covers them); every other attribute must hold
# what a new Query holds, so a queryset this module does not know is never taken for a shape.
_KEYED = frozenset(
    {
        "model",
        "alias_refcount",
        "alias_map",
        "table_map",
        "where",
        "order_by",
        "default_ordering",
        "standard_ordering",
        "low_mark",
        "high_mark",
        "select_related",  # `values_list()` and COUNT read no related objects
        "filter_is_sticky",
        "_lookup_joins",
        "_annotation_select_cache",
        "used_aliases",
    }
)
_NEW: dict[type, Query] = {}  # a new Query per model, for what an attribute holds by default
MAX_SHAPES = 256  # per list and kind: a filter by a list of N ids is one shape per N


@dataclass(frozen=True)
class Shape:
    key: tuple
    params: tuple  # the WHERE clause's values
    limit: tuple  # () or (LIMIT,) or (LIMIT, OFFSET)

    @property
    def limit_clause(self) -> str:
        return ("", " LIMIT %s", " LIMIT %s OFFSET %s")[len(self.limit)]


def shape_of(queryset: QuerySet) -> Shape | None:
    """The shape of `queryset`'s statement and its values, or None for a queryset the ORM must
    compile itself."""
    query = queryset.query
    low, high = query.low_mark, query.high_mark
    if queryset._fields is not None or (high is None and low) or not _only_keyed(query):
        return None
    if not all(type(part) is str for part in query.order_by):
        return None
    try:
        where_sql, where_params = query.get_compiler(using=queryset.db).compile(query.where)
    except (EmptyResultSet, FullResultSet):
        return None
    joins = tuple(
        (alias, join.identity, getattr(join, "join_type", None), query.alias_refcount[alias])
        for alias, join in query.alias_map.items()
    )
    limit = () if high is None else (high - low, low) if low else (high - low,)
    order = (query.order_by, query.default_ordering, query.standard_ordering)
    return Shape((query.model, queryset.db, joins, where_sql, order, len(limit)), tuple(where_params), limit)


def _only_keyed(query: Query) -> bool:
    new = _NEW.get(query.model)
    if new is None:
        new = _NEW[query.model] = Query(query.model)
    for name, value in vars(query).items():
        if name not in _KEYED and getattr(new, name, MISSING) != value:
            return False
    return True


def same_params(compiled, expected: tuple) -> bool:
    """The ORM's parameters are exactly the shape's: as many, and each of the same type and equal."""
    compiled = tuple(compiled)
    return len(compiled) == len(expected) and all(
        type(left) is type(right) and left == right for left, right in zip(compiled, expected, strict=True)
    )


class Statements:
    """The statements of one list (a row plan) and one kind (its page or its COUNT) by shape; a
    shape whose statement could not be kept is remembered as None, so it is checked once."""

    def __init__(self):
        self.by_key: dict[tuple, object] = {}

    def get(self, shape: Shape):
        """The statement kept for this shape, None if it could not be kept, MISSING if not seen."""
        return self.by_key.get(shape.key, MISSING)

    def put(self, shape: Shape, statement) -> None:
        if len(self.by_key) < MAX_SHAPES:
            self.by_key[shape.key] = statement


MISSING = object()


def counted_once(queryset: QuerySet, shape: Shape) -> tuple[int, str | None]:
    """The ORM's COUNT of `queryset` (unsliced), and its statement if its parameters are exactly
    the shape's (else None)."""
    captured = []

    def capture(execute, sql, params, many, context):
        captured.append((sql, params))
        return execute(sql, params, many, context)

    with connections[queryset.db].execute_wrapper(capture):
        total = QuerySet.count(queryset)
    if len(captured) != 1 or not same_params(captured[0][1] or (), shape.params):
        return total, None
    return total, captured[0][0]
