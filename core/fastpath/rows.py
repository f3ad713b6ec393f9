"""The one read path of every GET: the resource's queryset, read as plain rows whose columns come
from the output serializer's fields.

A resource has one selector, whose queryset serves reads and writes alike (visibility, order,
`select_related` / `prefetch_related` for the model instances a write answers with). For a GET,
`read_rows(queryset, serializer_class)` keeps that queryset's filters and order and changes only how
it is fetched: the columns are those the serializer shows, found from its fields' `source_attrs`,
and each row becomes a small read-only object instead of a model instance, which was the largest
cost of a list page (docs/benchmarks.md, "Profiling and what changed"). So a field added to a
serializer is read by GET as soon as it is declared; there is no second list of fields to forget.

How a serializer's fields become queries (worked out once per serializer class and model):

- a field whose source is a column (`title`, `organizer_id`, `source="ical_sequence"`) reads it;
- a dotted source through a foreign key (`source="rescheduled_from.uid"`) and a nested serializer
  on a foreign key (`user = CompactUserSerializer(source="organizer")`) read the related columns
  in the same query (a LEFT JOIN); the related object is `None` when the key is NULL;
- a nested serializer with `many=True` on a reverse foreign key (`attendees`) costs one more query
  for the whole page, whatever the page size. When the selector prefetches that relation with a
  `Prefetch(lookup, queryset=...)`, the rows follow that queryset's filters and order, so both
  paths list the same related objects in the same order; otherwise in the model's default order
  (its primary key when it has none);
- a field whose source is a model property (`days`) reads every column of its model, and the row
  has the property;
- a `SerializerMethodField` says what its method reads with `@reads("cancellation_reason", ...)`
  (dotted sources, as above). A method that does not say is an error when the plan is made,
  not a key that GET silently drops.

Anything else (a many-to-many, a source the model does not have) is an `ImproperlyConfigured`
error naming the serializer and the field, raised by the first GET and by
`tests/test_read_plans.py`, which plans every resource's list and detail serializers.

The pagination's COUNT runs on the queryset as the selector wrote it: the joins of the row query
are not in it.
"""

import dis
import functools
import inspect
import types
from collections import defaultdict
from collections.abc import Callable

from django.core.exceptions import EmptyResultSet, FieldDoesNotExist, FullResultSet, ImproperlyConfigured
from django.db import connections
from django.db.models import Model, Prefetch, QuerySet
from django.db.models.query import BaseIterable, ModelIterable
from rest_framework import serializers

from core.fastpath.branches import holds_branches, planned_once_suits
from core.fastpath.compiled_queries import AnyOf, CompiledValues, Parameter, rows_together
from core.fastpath.shapes import MISSING, Shape, Statements, counted_once, same_params, shape_of
from core.fastpath.switch import fast_paths


def reads(*sources: str) -> Callable:
    """Declares what a `SerializerMethodField`'s method reads from the object, as dotted sources
    (`"user.default_schedule_id"`, `"pk"`), so that `read_rows` fetches it."""

    def mark(method):
        method.reads = sources
        return method

    return mark


class _Node:
    """One model's part of a row query: the columns read from it, the foreign keys followed in the
    same query (`forward`) and the reverse relations read by a query of their own (`many`)."""

    def __init__(self, model: type[Model], prefix: str, where: str):
        self.model = model
        self.prefix = prefix
        self.where = where  # "ScheduleSerializer.availability", for error messages
        self.attnames: list[str] = [model._meta.pk.attname]
        self.properties: set[str] = set()
        self.forward: dict[str, tuple[str, _Node]] = {}  # attribute -> (its foreign key's attname, node)
        self.many: dict[str, tuple[str, _Node]] = {}  # attribute -> (the related model's foreign key attname, node)
        self.compiled: dict[tuple, CompiledValues] = {}  # (foreign key attname, `_plain_shape`) -> its query
        self.pages, self.counts = Statements(), Statements()  # a root node's page and COUNT by shape

    def need(self, attname: str) -> None:
        if attname not in self.attnames:
            self.attnames.append(attname)

    def add_source(self, path: list[str]) -> "_Node":
        """Reads `path` (a field's `source_attrs`); returns the node the path ends on."""
        name = self.model._meta.pk.name if path[0] == "pk" else path[0]
        try:
            field = self.model._meta.get_field(name)
        except FieldDoesNotExist:
            if isinstance(inspect.getattr_static(self.model, name, None), property) and len(path) == 1:
                self.add_property(name)
                for concrete in self.model._meta.concrete_fields:
                    self.need(concrete.attname)
                return self
            raise ImproperlyConfigured(
                f"{self.where}: {self.model.__name__} has no field or property {name!r} to read."
            ) from None
        if field.concrete and (not field.is_relation or name == field.attname != field.name):  # `organizer_id`
            if len(path) > 1:
                raise ImproperlyConfigured(f"{self.where}: {self.model.__name__}.{name} is not a relation.")
            self.need(field.attname)
            return self
        if field.concrete and (field.many_to_one or field.one_to_one):
            self.need(field.attname)
            if name not in self.forward:
                child = _Node(field.related_model, f"{self.prefix}{name}__", f"{self.where}.{name}")
                self.forward[name] = (field.attname, child)
            child = self.forward[name][1]
            return child.add_source(path[1:]) if len(path) > 1 else child
        raise ImproperlyConfigured(
            f"{self.where}: {self.model.__name__}.{name} is a {type(field).__name__}; only columns, "
            "foreign keys and (with many=True) reverse foreign keys can be read as rows."
        )

    def add_property(self, name: str) -> None:
        """A model property read as a field runs on the row, which holds its model's columns and
        the properties the plan copies: what the property reads must be one of those (a column, `pk`,
        another property, a constant), never a relation or a method, which a row does not have. Checked
        from the names its code reads, when the plan is made (`tests/test_read_plans.py` makes every
        resource's), not at the first GET that reaches a row without them."""
        self.properties.add(name)
        meta = self.model._meta
        columns = {field.attname for field in meta.concrete_fields}
        columns |= {field.name for field in meta.concrete_fields if not field.is_relation}
        for attribute in _names_read(inspect.getattr_static(self.model, name).fget):
            found = inspect.getattr_static(self.model, attribute, None)
            if found is None or attribute in columns or attribute == "pk" or attribute in self.properties:
                continue
            if isinstance(found, property):
                self.add_property(attribute)
            elif callable(found) or hasattr(found, "__get__"):
                raise ImproperlyConfigured(
                    f"{self.where}: {self.model.__name__}.{name} reads {attribute!r}, which its rows do not "
                    "have: a model property read as a field may read only its model's columns (and other "
                    "such properties)."
                )

    def add_many(self, path: list[str], where: str) -> "_Node":
        name = path[0]
        try:
            relation = self.model._meta.get_field(name)
        except FieldDoesNotExist:
            relation = None
        if relation is None or not relation.one_to_many or len(path) != 1:
            raise ImproperlyConfigured(f"{where}: many=True needs a reverse foreign key of {self.model.__name__}.")
        if name not in self.many:
            child = _Node(relation.related_model, "", where)
            child.need(relation.field.attname)
            self.many[name] = (relation.field.attname, child)
        return self.many[name][1]

    def add_serializer(self, serializer_class: type[serializers.BaseSerializer]) -> None:
        where = serializer_class.__name__
        for key, field in _fields(serializer_class).items():
            if field.write_only:
                continue
            place = f"{where}.{key}"
            if isinstance(field, serializers.SerializerMethodField):
                sources = getattr(getattr(serializer_class, field.method_name), "reads", None)
                if sources is None:
                    raise ImproperlyConfigured(
                        f"{place}: {field.method_name} must say what it reads with @core.fastpath.reads(...)."
                    )
                for source in sources:
                    self.add_source(source.split("."))
            elif isinstance(field, serializers.ListSerializer):
                self.add_many(field.source_attrs, place).add_serializer(type(field.child))
            elif isinstance(field, serializers.BaseSerializer):
                self.add_source(field.source_attrs).add_serializer(type(field))
            elif not field.source_attrs:
                raise ImproperlyConfigured(f"{place}: source='*' cannot be read as columns.")
            else:
                self.add_source(field.source_attrs)

    def finish(self, lookups: list[str]) -> None:
        """Places this node's columns (then its forward nodes') in the query's column list."""
        self.start = len(lookups)
        lookups.extend(f"{self.prefix}{attname}" for attname in self.attnames)
        self.end = len(lookups)
        self.row_class = _row_class(self.model, self.properties)
        self.links = []
        for name, (key_attname, child) in self.forward.items():
            child.finish(lookups)
            self.links.append((name, self.start + self.attnames.index(key_attname), child))
        for _name, (_key, child) in self.many.items():
            child.finish_query()

    def finish_query(self) -> None:
        self.lookups: list[str] = []
        self.finish(self.lookups)

    def builder(self) -> Callable:
        """`build(row, shared)`: the row object of this node's slice of `row`, with its forward
        relations (each related row built once per page and shared, `shared[node][key]`). Written
        out as one function per node, made once: a dict literal of the columns at their
        positions, then each forward relation (docs/benchmarks.md, "Profiling and what changed")."""
        build = self.__dict__.get("_build")
        if build is None:
            build = self._build = self._write_build()
        return build

    def _write_build(self) -> Callable:
        constants: dict = {"ROW_CLASS": self.row_class}
        columns = ", ".join(
            f"{attname!r}: row[{position}]" for position, attname in enumerate(self.attnames, self.start)
        )
        lines = [
            "def build(row, shared):",
            "    item = ROW_CLASS.__new__(ROW_CLASS)",
            f"    values = item.__dict__ = {{{columns}}}",
        ]
        for index, (name, key_at, child) in enumerate(self.links):
            constants[f"CHILD{index}"], constants[f"BUILD{index}"] = child, child.builder()
            lines += [
                f"    key = row[{key_at}]",
                "    if key is None:",
                f"        values[{name!r}] = None",
                "    else:",
                f"        cache = shared[CHILD{index}]",
                "        related = cache.get(key)",
                "        if related is None:",
                f"            related = cache[key] = BUILD{index}(row, shared)",
                f"        values[{name!r}] = related",
            ]
        lines.append("    return item")
        source = "\n".join(lines)
        exec(compile(source, f"<build of {self.where}>", "exec"), constants)  # noqa: S102
        return constants["build"]

    def fetch(self, queryset: QuerySet, related: dict[str, QuerySet]) -> list:
        """The rows of `queryset` (a query on this node's model), with their reverse relations
        read from `related` (the selector's prefetch querysets by lookup) where it has them."""
        return self.items(queryset.values_list(*self.lookups), related)

    def items(self, rows, related: dict[str, QuerySet], read: dict[str, list] | None = None) -> list:
        """The row objects of `rows`, with their reverse relations: read through `related` (the
        selector's prefetch querysets by lookup), or given already read in `read` (by lookup)."""
        shared: defaultdict = defaultdict(dict)  # node -> {key: the related row built once}
        build = self.builder()
        items = [build(row, shared) for row in rows]
        if items and self.many:
            pk_attname = self.model._meta.pk.attname
            by_pk = {item.__dict__[pk_attname]: item for item in items}
            for name, (key_attname, child) in self.many.items():
                for item in items:
                    item.__dict__[name] = []
                if read is not None and name in read:
                    child_items = child.items(read[name], {})
                else:
                    child_items = child.related_items(self.relation_base(name, related), key_attname, list(by_pk))
                for child_item in child_items:
                    by_pk[child_item.__dict__[key_attname]].__dict__[name].append(child_item)
        return items

    def relation_base(self, name: str, related: dict[str, QuerySet]) -> QuerySet:
        """What the reverse relation `name` is read from: the selector's prefetch queryset, else
        the related manager's order (the model's default, else the key)."""
        base = related.get(name)
        if base is None:
            _key, child = self.many[name]
            base = child.model._default_manager.all()
            base = base if base.ordered else base.order_by("pk")
        return base

    def page_statement(self, queryset: QuerySet, shape: Shape) -> CompiledValues | None:
        """The statement of `queryset`'s rows without its slice for its shape: compiled by the ORM
        at the shape's first request and kept if its parameters are exactly the shape's
        (core.fastpath.shapes); None when it was not kept."""
        kept = self.pages.get(shape)
        if kept is not MISSING:
            return kept
        # A rule of branches is compiled against the query's slice (core.fastpath.branches): its
        # statement is compiled sliced, and the slice the ORM wrote at its end is cut off.
        sliced = holds_branches(queryset.query.where)
        unsliced = queryset._chain()
        if not sliced:
            unsliced.query.clear_limits()
        try:
            statement = CompiledValues(unsliced.values_list(*self.lookups))
        except (EmptyResultSet, FullResultSet):
            statement = None
        if statement is not None and sliced:
            query = queryset.query
            suffix = " " + connections[queryset.db].ops.limit_offset_sql(query.low_mark, query.high_mark)
            statement = statement.without_suffix(suffix)
        if statement is not None and not same_params(statement.params, shape.params):
            statement = None
        if statement is not None and sliced:
            # A rule compiled once (a `Template`) is the same statement for every caller, and each
            # branch reads its index whatever the values: planned once too.
            statement.planned_once = planned_once_suits(queryset.query.where)
        self.pages.put(shape, statement)
        return statement

    def by_key(self) -> CompiledValues:
        """This (root) node's columns of one row by its primary key, compiled once."""
        compiled = self.__dict__.get("_by_key")
        if compiled is None:
            key = Parameter("pk", self.model._meta.pk)
            rows = self.model._default_manager.filter(pk=key).order_by().values_list(*self.lookups)
            compiled = self._by_key = CompiledValues(rows)
        return compiled

    def related_items(self, base: QuerySet, key_attname: str, keys: list) -> list:
        """This (reverse relation's) node's rows whose `key_attname` is one of `keys`, filtered and
        ordered as `base`. A plain ordered `base` (no filter, join, annotation or slice: what the
        selectors prefetch) is compiled once per node, order and database, with the keys as one
        array parameter (`_relation_query`); any other is built by the ORM on each call."""
        compiled = self.relation_statement(base, key_attname)
        if compiled is None:
            return self.fetch(base.filter(**{f"{key_attname}__in": keys}), {})
        return self.items(compiled.rows(keys=keys), {})

    def relation_statement(self, base: QuerySet, key_attname: str) -> CompiledValues | None:
        """`related_items`'s compiled statement for a plain `base`, else None."""
        shape = _plain_shape(base)
        if shape is None:
            return None
        compiled = self.compiled.get((key_attname, shape))
        if compiled is None:
            compiled = self.compiled[(key_attname, shape)] = _relation_query(base, key_attname, self.lookups)
        return compiled


# What a plain ordered queryset's Query may have set, and to what (`_plain_shape`): anything else
# (a filter, a join, an annotation, a slice, `only()`, `extra()`) is not plain.
_PLAIN_QUERY = {
    "alias_refcount": {},
    "alias_map": {},
    "alias_cols": True,
    "external_aliases": {},
    "table_map": {},
    "used_aliases": set(),
    "annotations": {},
    "extra": {},
    "_filtered_relations": {},
    "_annotation_select_cache": None,
    "filter_is_sticky": False,
    "extra_order_by": (),
}


def _plain_shape(queryset: QuerySet) -> tuple | None:
    """(model, order, database) of a queryset that is only its model's rows in an order given by
    field names, else None. Everything the Query has set is checked against `_PLAIN_QUERY`, so a
    queryset this does not know is never taken for a plain one."""
    query = queryset.query
    for name, value in vars(query).items():
        if name == "where":
            if value.children:
                return None
        elif name == "order_by":
            if not all(type(part) is str for part in value):
                return None
        elif name == "model":
            continue
        elif name not in _PLAIN_QUERY or value != _PLAIN_QUERY[name]:
            return None
    if queryset._fields is not None or queryset._iterable_class is not ModelIterable:
        return None
    return (query.model, tuple(query.order_by), query.default_ordering, query.standard_ordering, queryset.db)


def _relation_query(base: QuerySet, key_attname: str, lookups: list[str]) -> CompiledValues:
    """A reverse relation's rows for a page, as `base.filter(key__in=keys).values_list(*lookups)`
    reads them but with the keys as one array (`AnyOf`), compiled once: building and compiling that
    query cost more than PostgreSQL took to answer it (docs/benchmarks.md)."""
    keys = Parameter("keys", base.model._meta.get_field(key_attname))
    return CompiledValues(base.filter(AnyOf(key_attname, keys)).values_list(*lookups))


def _fields(serializer_class) -> dict:
    return serializer_class().fields


def _names_read(function) -> set[str]:
    """The attributes `function` reads from its first argument (`self.<name>`), in its own code and
    in the functions and comprehensions nested in it."""
    itself = function.__code__.co_varnames[0]
    names, codes = set(), [function.__code__]
    while codes:
        code = codes.pop()
        previous = None
        for instruction in dis.get_instructions(code):
            if (
                instruction.opname in ("LOAD_ATTR", "LOAD_METHOD")
                and previous is not None
                and previous.opname in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE")
                and previous.argval == itself
            ):
                names.add(instruction.argval)
            previous = instruction
        codes.extend(constant for constant in code.co_consts if isinstance(constant, types.CodeType))
    return names


def _row_class(model: type[Model], properties: set[str]) -> type:
    """A plain class for one model's rows: its columns by attname, `pk`, and the model properties
    the serializer reads (which may read only columns)."""
    pk_attname = model._meta.pk.attname
    namespace = {
        "__module__": __name__,
        "__doc__": f"A read-only row of {model.__name__} (core.fastpath).",
        "pk": property(lambda item: item.__dict__[pk_attname]),
        "__repr__": lambda item: f"<{model.__name__} row {item.__dict__.get(pk_attname)}>",
        **{name: inspect.getattr_static(model, name) for name in properties},
    }
    return type(f"{model.__name__}Row", (), namespace)


class RowIterable(BaseIterable):
    """Yields the rows of `read_rows`: `node` is set on the subclass made for each plan; the
    reverse relations' querysets come from the queryset (`RowCount._row_related`)."""

    node: _Node

    def __iter__(self):
        related = getattr(self.queryset, "_row_related", {})
        shape = shape_of(self.queryset)
        statement = None if shape is None else self.node.page_statement(self.queryset, shape)
        if statement is None:  # a shape not known, or not kept: the ORM reads it
            yield from self.node.fetch(self.queryset, related)
        else:
            rows = statement.run(statement.sql + shape.limit_clause, (*shape.params, *shape.limit))
            yield from self.node.items(rows, related)


class RowCount:
    """Mixed into the class of the queryset `read_rows` answers: its COUNT, too, is compiled once
    per shape (core.fastpath.shapes), and its clones keep the querysets its reverse relations are
    read through (`_row_related`: a subclass of the iterable for each queryset made a class per
    request, which only the cyclic collector could free)."""

    _row_related: dict[str, QuerySet] = {}

    def _clone(self):
        clone = super()._clone()
        clone._row_related = self._row_related
        return clone

    def count(self):
        if self._result_cache is not None or self.query.is_sliced:
            return super().count()
        shape = shape_of(self)
        if shape is None:
            return super().count()
        node = self._iterable_class.node
        sql = node.counts.get(shape)
        if sql is MISSING:
            total, sql = counted_once(self, shape)
            node.counts.put(shape, sql)
            return total
        if sql is None:
            return super().count()
        with connections[self.db].cursor() as cursor:
            cursor.execute(sql, shape.params)
            return cursor.fetchone()[0]


_PLANS: dict[tuple[type, type], type[RowIterable]] = {}


def row_iterable(model: type[Model], serializer_class: type[serializers.BaseSerializer]) -> type[RowIterable]:
    """The iterable that reads `serializer_class`'s fields of `model` as rows, planned once."""
    plan = _PLANS.get((model, serializer_class))
    if plan is None:
        node = _Node(model, "", serializer_class.__name__)
        node.add_serializer(serializer_class)
        node.finish_query()
        plan = _PLANS[(model, serializer_class)] = type(
            f"{serializer_class.__name__}Rows", (RowIterable,), {"node": node}
        )
    return plan


def _related(queryset: QuerySet) -> dict[str, QuerySet]:
    """The querysets of `queryset`'s `Prefetch`es by lookup: what its reverse relations read."""
    return {
        lookup.prefetch_through: lookup.queryset
        for lookup in queryset._prefetch_related_lookups
        if isinstance(lookup, Prefetch) and lookup.queryset is not None
    }


def read_rows(queryset: QuerySet, serializer_class: type[serializers.BaseSerializer]) -> QuerySet:
    """`queryset` with the same filters and order, evaluated as rows of what `serializer_class`
    shows. Pagination, `filter()`, `first()` and slicing work on it as on any queryset. With the
    switch off (`FAST_PATHS`), `queryset` itself: model instances, the selector's prefetches."""
    if not fast_paths():
        return queryset
    rows = queryset.prefetch_related(None)  # the rows come with their relations (`_Node.fetch`)
    rows._iterable_class = row_iterable(queryset.model, serializer_class)  # kept by clones, as .values() keeps its own
    rows.__class__ = _counting(type(rows))  # and so is its class,
    rows._row_related = _related(queryset)  # which keeps this too
    return rows


@functools.cache
def _counting(queryset_class: type[QuerySet]) -> type[QuerySet]:
    if issubclass(queryset_class, RowCount):
        return queryset_class
    return type(f"Row{queryset_class.__name__}", (RowCount, queryset_class), {})


def read_row_by_key(
    queryset: QuerySet, serializer_class: type[serializers.BaseSerializer], pk, *, related: dict | None = None
) -> object | None:
    """The row of `queryset`'s model with this primary key, as `read_rows` reads it (the same
    columns, and the reverse relations through `queryset`'s prefetches, or `related`'s: see
    `plain_prefetches`), whatever `queryset`'s filters: for the answer of a write, which shows the
    object it wrote. The row's statement is compiled once per model and serializer
    (`_Node.by_key`), so reading one object back costs a primary-key lookup, not the ORM building
    the list's query."""
    node = row_iterable(queryset.model, serializer_class).node
    related = _related(queryset) if related is None else related
    # The row and its plain reverse relations (whose keys are this one key) in one round trip.
    runs, names = [(node.by_key(), {"pk": pk})], []
    for name, (key_attname, child) in node.many.items():
        statement = child.relation_statement(node.relation_base(name, related), key_attname)
        if statement is not None:
            runs.append((statement, {"keys": [pk]}))
            names.append(name)
    rows, *relations = rows_together(runs)
    return next(iter(node.items(rows, related, dict(zip(names, relations, strict=True)))), None)


def plain_prefetches(queryset: QuerySet) -> dict[str, QuerySet] | None:
    """`queryset`'s prefetch querysets by lookup when every one is plain (its model's rows in an
    order, no filter: `_plain_shape`), so the same for every caller and kept safely by a view for
    the next request; None when one is not."""
    related = _related(queryset)
    return related if all(_plain_shape(base) is not None for base in related.values()) else None
