"""Many rows of one model written by one statement whose text does not depend on how many rows there
are, for a hot write whose `bulk_create` costs more CPU to build than PostgreSQL takes to run it
(the outbox's rows of a booking's e-mails).

`bulk_create` builds its INSERT on every call: a model instance per row, each field's `pre_save`
and `get_db_prep_save` per value, then the statement compiled (the outbox's three rows: most of
what the booking's mail cost in the request). `CompiledInsert` writes the text once per process,

    INSERT INTO "table" ("a", "b", "c", …) SELECT *, %s::bigint, … FROM unnest(%s::varchar[], %s::jsonb[], …)
    RETURNING "id"

with one array parameter per column whose values differ by row (the form Django 5.2's
`bulk_create` takes on PostgreSQL for two rows or more) and one value per column the rows share,
so that one prepared statement (settings.py: server-side binding, `DB_PREPARE_THRESHOLD`) serves
one row or fifty, and each call only puts its values in place.
`unnest` of several arrays gives their elements side by side, row by row, and an INSERT from a
plain function scan writes and returns its rows in that order: the keys come back in row order,
as `bulk_create` sets them on its objects (and as it relies on too).

The rules it puts on its callers: values are given as the database takes them, which is what the
ORM's `get_db_prep_save` gives for them (text, numbers, aware date-times, None), except a JSON
column's, which are Python objects, serialized here (with orjson, `json_text`); a model with a
database default (`db_default`) or a generated column is refused.

With the switch off (`FAST_PATHS`) the same call builds the model's instances and `bulk_create`s them.
"""

import json

import orjson
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import CharField, DateField, DateTimeField, JSONField, TextField
from django.db.models.fields import NOT_PROVIDED, AutoFieldMixin
from django.utils import timezone

from core.fastpath.switch import fast_paths

# orjson hands these to `default` (none given, so they fail over to `json.dumps`, which refuses them
# as the ORM does) where it would write them: date-times and dataclasses. A subclass of str or int
# (a `TextChoices` member, such as a booking's status) both write as its plain value.
_PASSED_THROUGH = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def json_text(value) -> str | None:
    """A JSON column's value as the text PostgreSQL reads into `jsonb`: the same document as
    `JSONField` sends (`json.dumps`), written by orjson (compiled; an outbox context of seventeen
    keys in 0.5 µs against 7.3). What orjson refuses (a key that is no string, an integer past 64
    bits, text that is no valid UTF-8) or is told to pass (a date-time, a dataclass) goes to
    `json.dumps`, which writes it or raises as the ORM would. Where `json.dumps` would raise and orjson writes (an
    enum that is no str or int, a UUID), the value is written: no caller sends one. None is SQL
    NULL, as `JSONField` stores a Python None."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, option=_PASSED_THROUGH).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)


def text_array(values: list) -> str:
    """PostgreSQL's text form of an array of texts (`{"a","b \\"c\\"",NULL}`), for a parameter
    cast to `varchar[]`, `text[]` or `jsonb[]`: every element quoted, a double quote or backslash in
    it escaped, None an unquoted NULL. psycopg dumps a list element by element, after working out
    their common type, in Python: the outbox's six columns of two rows took twice the CPU as lists
    (micro-benchmark: 224-258 against 80-122 µs for the whole INSERT)."""
    return (
        "{"
        + ",".join(
            "NULL" if value is None else '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
            for value in values
        )
        + "}"
    )


class CompiledInsert:
    """`INSERT … SELECT *, %s, … FROM unnest(%s, …) RETURNING pk` of a model's rows: an array for
    each column named in `each` (its values differ from row to row), one value for each of the
    others (the same in every row: given, or the field's default). Built once per process (in a
    `functools.cache`d function, as `CompiledQuery`). Sending a shared column as one value, not
    as an array of copies, spares psycopg an array to dump: a fifth of the call's CPU for the
    outbox's nine shared columns."""

    def __init__(self, model, *, each: list[str]):
        connection = connections[DEFAULT_DB_ALIAS]
        quote = connection.ops.quote_name
        meta = model._meta
        self.model = model
        fields = []
        for field in meta.concrete_fields:
            if field.generated or field.db_default is not NOT_PROVIDED:
                raise ValueError(f"CompiledInsert does not write {field}: a generated column or a database default.")
            if isinstance(field, AutoFieldMixin):
                continue
            if _automatic(field) and not isinstance(field, DateTimeField):
                raise ValueError(f"CompiledInsert writes now into date-times only, not into {field}.")
            if isinstance(field, JSONField) and field.encoder is not None:
                raise ValueError(f"CompiledInsert writes JSON as json.dumps does, not with {field}'s encoder.")
            fields.append(field)
        unknown = set(each) - {field.attname for field in fields}
        if unknown or not each:
            raise ValueError(f"CompiledInsert needs columns of {model.__name__} for `each`, not {sorted(unknown)}.")
        self.each = [field for field in fields if field.attname in each]
        self.every = [field for field in fields if field.attname not in each]
        self._json = {field.attname for field in fields if isinstance(field, JSONField)}
        self._text = {field.attname for field in fields if isinstance(field, (CharField, TextField))}
        self._now = {field.attname for field in fields if _automatic(field)}
        # (attname, the field's default: what the ORM writes for a value not given)
        self._shared = [(field.attname, field.get_default) for field in self.every]

        # The column types without their lengths (varchar, not varchar(20)): a cast to varchar(20)
        # would cut a longer text where the INSERT must refuse it, as the ORM's does.
        def cast(field) -> str:
            return field.db_type(connection).split("(")[0]

        columns = ", ".join(quote(field.column) for field in [*self.each, *self.every])
        shared = "".join(f", %s::{cast(field)}" for field in self.every)
        arrays = ", ".join(f"%s::{cast(field)}[]" for field in self.each)
        self.sql = (
            f"INSERT INTO {quote(meta.db_table)} ({columns}) SELECT *{shared} FROM unnest({arrays}) "
            f"RETURNING {quote(meta.db_table)}.{quote(meta.pk.column)}"
        )

    def insert(self, count: int, *, each: dict[str, list], every: dict) -> list:
        """Write `count` rows and return their keys, in row order. `each`: for each of the columns
        named when it was built (by field `attname`), a list of one value per row; `every`: a value
        for every row, by `attname`. A field given no value gets its default, as the ORM gives it;
        an `auto_now`/`auto_now_add` date-time is now whatever is given, as the ORM's `pre_save`
        makes it (the same for every row of the call). One statement."""
        if not count:
            return []
        if not fast_paths():
            return self.plain(count, each=each, every=every)
        params = []
        for attname, default in self._shared:
            if attname in self._now:
                params.append(timezone.now())
            else:
                value = every[attname] if attname in every else default()
                params.append(json_text(value) if attname in self._json else value)
        for field in self.each:
            values = each[field.attname]
            if len(values) != count:
                raise ValueError(f"{field.attname}: {len(values)} values for {count} rows.")
            if field.attname in self._json:
                params.append(text_array([json_text(value) for value in values]))
            elif field.attname in self._text:
                params.append(text_array(values))
            else:
                params.append(values)
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(self.sql, params)
            return [row[0] for row in cursor.fetchall()]

    def plain(self, count: int, *, each: dict[str, list], every: dict) -> list:
        """What the ORM writes for the same call (the switch off): the instances, `bulk_create`d."""
        objects = [
            self.model(**every, **{attname: values[index] for attname, values in each.items()})
            for index in range(count)
        ]
        return [instance.pk for instance in self.model.objects.bulk_create(objects)]


def _automatic(field) -> bool:
    return isinstance(field, DateField) and (field.auto_now or field.auto_now_add)
