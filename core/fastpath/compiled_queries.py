"""Model instances from rows the ORM's iterator does not read, for the few hot lookups whose ORM
query costs more CPU to build than PostgreSQL takes to answer it (the API key lookup, the bookable
event type) and for the statements the ORM cannot say (webhooks.delivery_sql).

- `CompiledQuery`: an ORM queryset built and compiled ONCE per process, with a `Parameter` where
  each call's value goes; every call runs that SQL with the real values and builds the instances its
  `select_related` asks for. Tables, joins and the WHERE clause are the ORM's, so a rule written as a
  `Q` (a visibility filter) is written once and applies here too. The cost it saves is building the
  query on every call (docs/benchmarks.md, "Profiling and what changed").
- `CompiledValues`: the same for a `values_list()` queryset: its rows as tuples, after the
  converters the ORM applies. With `AnyOf`, a list of values is one array parameter
  (`column = ANY(%s)`), so one statement serves lists of any length.
- `row_layout(model)` and `instances(row, …)`: for hand-written SQL that selects a model's concrete
  columns in order (`RowLayout.columns`).

Either way each slice of the row becomes an instance with `Model.from_db` after the backend's and the
field's converters, as the ORM's own iterator does: same attributes, same `_state`, same database
converters (JSONField's decoding for one).

With the switch off (`FAST_PATHS`), `CompiledQuery` and `CompiledValues` evaluate their queryset
with the ORM on every call, each `Parameter` then standing for the call's value: the ORM builds,
compiles and reads it as it reads any queryset.
"""

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import BooleanField, Expression, F, JSONField, QuerySet
from django.db.models.expressions import Col

from core.fastpath.db_loaders import read_in_binary
from core.fastpath.switch import fast_paths


@dataclass(frozen=True)
class RowLayout:
    """Where a model's fields sit in (a slice of) a row, and how to turn them into an instance."""

    model: type
    attnames: list[str]
    converters: list[tuple[int, Col, list]]  # (column index, its Col, the backend's and the field's converters)
    fields: list
    pk_index: int

    def columns(self, alias: str) -> str:
        """`"alias"."column", …` for a SELECT (or RETURNING) list, in the order `instance` reads them."""
        quote = connection.ops.quote_name
        return ", ".join(f"{quote(alias)}.{quote(field.column)}" for field in self.fields)

    def instance(self, values):
        """The instance for `values` (this layout's slice of the row); None when its primary key
        is NULL, which is what a LEFT JOIN that matched nothing gives."""
        if values[self.pk_index] is None:
            return None
        values = list(values)
        for index, column, converters in self.converters:
            for converter in converters:
                values[index] = converter(values[index], column, connection)
        return self.model.from_db(connection.alias, self.attnames, values)


def _layout(model, columns: list[Col]) -> RowLayout:
    """As the ORM's compiler does (`get_converters`): the backend's converters for each column's
    type, then the field's own (`from_db_value`), worked out once rather than per row."""
    converters = []
    for index, column in enumerate(columns):
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if found:
            converters.append((index, column, found))
    attnames = [column.target.attname for column in columns]
    return RowLayout(
        model, attnames, converters, [column.target for column in columns], attnames.index(model._meta.pk.attname)
    )


def row_layout(model) -> RowLayout:
    """The layout of all of a model's concrete columns, in `_meta` order."""
    return _layout(model, [field.get_col(model._meta.db_table) for field in model._meta.concrete_fields])


def instances(row, *layouts: RowLayout) -> list:
    """One instance (or None) per layout, from consecutive slices of `row`."""
    found, start = [], 0
    for layout in layouts:
        end = start + len(layout.fields)
        found.append(layout.instance(row[start:end]))
        start = end
    return found


class Parameter(Expression):
    """A value that each run of a `CompiledQuery` gives by name: it compiles to a placeholder, so the
    ORM writes the SQL around it once. Usable wherever the ORM takes an expression: `.filter(pk=…)`,
    a foreign key (`Q(owner=…)` compares `owner_id`), a subquery's filter."""

    def __init__(self, name: str, output_field):
        super().__init__(output_field=output_field)
        self.name = name

    def as_sql(self, compiler, connection):
        values = _bound.get()
        if values is None:
            return "%s", (self,)
        try:
            return "%s", (values[self.name],)
        except KeyError:
            raise TypeError(f"The compiled query needs a value for the parameter {self.name!r}.") from None


# The values of a call evaluated by the ORM (the switch off): each `Parameter` compiles to its own.
_bound: ContextVar[dict | None] = ContextVar("compiled_query_values", default=None)


@contextmanager
def _binding(values: dict) -> Iterator[None]:
    token = _bound.set(values)
    try:
        yield
    finally:
        _bound.reset(token)


@dataclass(frozen=True)
class _Selected:
    """One model of a compiled query's row, taken from the ORM compiler's `klass_info`: where its
    columns sit, the models `select_related` reads with it, and how it is attached to its parent."""

    layout: RowLayout
    start: int
    end: int
    related: tuple["_Selected", ...]
    local_setter: Callable | None = None
    remote_setter: Callable | None = None

    def instance(self, row):
        """This model's instance (None for a LEFT JOIN that matched nothing) with its related ones
        attached as the ORM's `RelatedPopulator` attaches them: each cached on its parent, even when
        None (so reading it costs no query), and the parent on it."""
        found = self.layout.instance(row[self.start : self.end])
        if found is not None:
            for selected in self.related:
                related = selected.instance(row)
                selected.local_setter(found, related)
                if related is not None:
                    selected.remote_setter(related, found)
        return found


class CompiledQuery:
    """An ORM queryset compiled once, run many times with new `Parameter` values.

    Built at the first call of a `functools.cache`d function, so that the SQL is written once per
    process, when the models and the connection's features are known. Each run costs what a
    hand-written statement costs (one execute, one row turned into instances), not the ORM's query
    building; the objects are those the queryset would give, with their `select_related` relations
    cached. Only the default database, and no `select_related` of a multi-table-inheritance child
    (the ORM builds it from its parent's columns); `_selected` refuses one.
    """

    def __init__(self, queryset: QuerySet):
        self.queryset = queryset
        compiler = queryset.query.get_compiler(using=DEFAULT_DB_ALIAS)
        self.sql, params = compiler.as_sql()
        self.params = list(params)  # with a `Parameter` where each run's values go
        self._slots = [(index, param.name) for index, param in enumerate(params) if isinstance(param, Parameter)]
        self._root = self._selected(compiler.klass_info, compiler.select)

    def _selected(self, klass_info: dict, select) -> _Selected:
        if klass_info.get("from_parent"):
            raise ValueError("CompiledQuery does not read a related model from its parent's columns.")
        indexes = klass_info["select_fields"]
        start, end = indexes[0], indexes[-1] + 1
        if indexes != list(range(start, end)):
            raise ValueError("CompiledQuery expects each model's columns next to each other.")
        return _Selected(
            _layout(klass_info["model"], [column for column, *_ in select[start:end]]),
            start,
            end,
            tuple(self._selected(related, select) for related in klass_info.get("related_klass_infos", ())),
            klass_info.get("local_setter"),
            klass_info.get("remote_setter"),
        )

    def first(self, **values):
        """The first instance the queryset gives with these values for its parameters, or None.
        One query. Values the query has no parameter for are ignored (a query compiled for a
        system admin has no `user_id`), so callers pass the same values to every variant."""
        if not fast_paths():
            return next(iter(self.plain(values)), None)
        with connection.cursor() as cursor:
            cursor.execute(self.sql, _values(self.params, self._slots, values))
            row = cursor.fetchone()
        return None if row is None else self._root.instance(row)

    def all(self, **values) -> list:
        """Every instance the queryset gives with these values for its parameters; one query."""
        if not fast_paths():
            return self.plain(values)
        with connection.cursor() as cursor:
            cursor.execute(self.sql, _values(self.params, self._slots, values))
            rows = cursor.fetchall()
        return [self._root.instance(row) for row in rows]

    def plain(self, values: dict) -> list:
        """What the ORM reads of the queryset with these values (the switch off)."""
        with _binding(values):
            return list(self.queryset.all())


def _values(params: list, slots: list[tuple[int, str]], values: dict) -> list:
    params = params.copy()
    try:
        for index, name in slots:
            params[index] = values[name]
    except KeyError as missing:
        raise TypeError(f"The compiled query needs a value for the parameter {missing}.") from None
    return params


class CompiledValues:
    """A `values_list()` queryset compiled once, run many times with new `Parameter` values; its
    rows are the tuples `values_list()` gives (the backend's and the fields' converters applied).
    Built at the first call of a `functools.cache`d function, as `CompiledQuery`. `binary`: a
    statement of integer and date-time columns only, whose rows are sent in binary
    (`db_loaders.read_in_binary`: the same values, cheaper by the row)."""

    def __init__(self, queryset: QuerySet, *, binary: bool = False):
        self.queryset = queryset
        self.db = queryset.db
        self.binary = binary
        # Run under the statement's generic plan (`planned_once`), set by whoever knows it suits it.
        self.planned_once = False
        compiler = queryset.query.get_compiler(using=self.db)
        self.sql, params = compiler.as_sql()
        self.params = list(params)
        self._slots = [(index, param.name) for index, param in enumerate(params) if isinstance(param, Parameter)]
        found = compiler.get_converters([column for column, *_ in compiler.select])
        self._converters = [
            (index, [_orjson_reading(converter) for converter in converters], expression)
            for index, (converters, expression) in found.items()
        ]

    def without_suffix(self, suffix: str) -> "CompiledValues | None":
        """This statement without `suffix` at the end of its text (a clause with no parameters),
        or None if its text does not end with it."""
        if not self.sql.endswith(suffix):
            return None
        self.sql = self.sql[: -len(suffix)]
        return self

    def rows(self, **values) -> list:
        """The rows for these values of the parameters; one query."""
        if not fast_paths():
            with _binding(values):
                return list(self.queryset.all())
        return self.run(self.sql, _values(self.params, self._slots, values))

    def run(self, sql: str, params: list | tuple) -> list:
        """The rows of `sql` (this statement, or this statement with a clause added after it) with
        these parameters, converted as `values_list()` converts them."""
        database = connections[self.db]
        if self.planned_once and database.get_autocommit():
            return self.converted(planned_once(database, sql, params), database)
        with database.cursor() as cursor:
            if self.binary:
                read_in_binary(cursor)
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return self.converted(rows, database)

    def converted(self, rows: list, database) -> list:
        if not self._converters:
            return rows
        converted = []
        for row in rows:
            row = list(row)
            for index, converters, expression in self._converters:
                value = row[index]
                for converter in converters:
                    value = converter(value, expression, database)
                row[index] = value
            converted.append(tuple(row))
        return converted


def planned_once(database, sql: str, params) -> list:
    """The rows of `sql`, run under the generic plan of its prepared statement (`plan_cache_mode`,
    for this statement only). psycopg prepares a statement from its DB_PREPARE_THRESHOLD-th run
    on, and PostgreSQL then plans it anew for each run's values whenever its generic plan is
    costed dearer than those: a statement of several branches (core.fastpath.branches) took longer
    to plan (2.7 ms) than to run (1.3 ms), on every page. Its plan does not depend on the values
    (each branch reads its own index in the list's order and stops), so it is planned once.

    The setting and the statement go in one round trip, psycopg's pipeline, with no Sync between
    them: PostgreSQL runs what comes before a Sync in one implicit transaction, so `SET LOCAL`
    holds for the statement and ends with it (nothing leaks to the next statement or, behind a
    pooler, to another client), with no BEGIN or COMMIT of our own. Only outside a transaction
    (`CompiledValues.run`): inside one, `SET LOCAL` would last until its end."""
    database.ensure_connection()
    with database.cursor() as setting, database.cursor() as cursor:
        with database.wrap_database_errors, database.connection.pipeline():
            setting.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            cursor.execute(sql, params)
        return cursor.fetchall()


def rows_together(runs: list[tuple["CompiledValues", dict]]) -> list[list]:
    """The rows of each (statement, values), the statements sent to PostgreSQL together in one
    pipeline: one round trip for all of them instead of one each (psycopg's pipeline mode; each
    statement still goes through Django's cursor, so it is logged and counted as any other)."""
    if len(runs) < 2 or not fast_paths():
        return [statement.rows(**values) for statement, values in runs]
    database = connections[runs[0][0].db]
    database.ensure_connection()
    cursors = [database.cursor() for _ in runs]
    try:
        with database.wrap_database_errors, database.connection.pipeline():
            for cursor, (statement, values) in zip(cursors, runs, strict=True):
                cursor.execute(statement.sql, _values(statement.params, statement._slots, values))
        return [
            statement.converted(cursor.fetchall(), database)
            for cursor, (statement, _values_) in zip(cursors, runs, strict=True)
        ]
    finally:
        for cursor in cursors:
            cursor.close()


# Integers orjson would read as floats: past 2**64 - 1 (20 digits) or below -2**63 (19 after a minus).
# Any run of 19 digits is sent the slow way: one pattern without alternatives costs a third less.
_LONG_NUMBER = re.compile(r"[0-9]{19}")


def _orjson_reading(converter: Callable) -> Callable:
    """A JSONField's converter that reads the column's text with orjson (compiled; a tenth of the
    standard library's time for a payment's `data`), where orjson reads what `json.loads` reads:
    every document PostgreSQL's jsonb writes, except integers past 64 bits, which orjson would
    turn into floats. Text with a run of 19 digits, or that orjson refuses, goes to the field's
    own converter, as does a field with a decoder of its own. Any other converter is kept."""
    field = getattr(converter, "__self__", None)
    if getattr(converter, "__func__", None) is not JSONField.from_db_value or field.decoder is not None:
        return converter

    def from_db_value(value, expression, connection):
        if type(value) is str and _LONG_NUMBER.search(value) is None:
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        return converter(value, expression, connection)

    return from_db_value


class AnyOf(Expression):
    """`column = ANY(%s)`: the column is one of the values of an array, so the SQL is the same for
    a list of any length (where `column__in` writes one placeholder per value). The array is a
    `Parameter` (`queryset.filter(AnyOf("booking_id", Parameter("keys", …)))`) or any expression
    of an array. A condition."""

    conditional = True

    def __init__(self, name: str, values: Expression):
        super().__init__(output_field=BooleanField())
        self.name, self.values = name, values
        self.column = None

    def resolve_expression(self, query=None, *args, **kwargs):
        resolved = self.copy()
        resolved.column = F(self.name).resolve_expression(query, *args, **kwargs)
        resolved.values = self.values.resolve_expression(query, *args, **kwargs)
        return resolved

    def as_sql(self, compiler, connection):
        column_sql, column_params = compiler.compile(self.column)
        values_sql, values_params = compiler.compile(self.values)
        return f"{column_sql} = ANY({values_sql})", (*column_params, *values_params)
