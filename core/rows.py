"""Model instances from a row of hand-written SQL, for the few hot lookups whose ORM query costs
more CPU to build than PostgreSQL takes to answer it (the API key lookup, the bookable event type).

Such a lookup writes its statement once per process from the models' `_meta` (so it follows the
fields as they change) and turns each slice of the row into an instance with `Model.from_db`, the
way the ORM's own iterator does: same attributes, same `_state`, same database converters.
"""

from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class RowLayout:
    """Where a model's concrete fields sit in a row, and how to turn them into an instance."""

    model: type
    attnames: list[str]
    converters: list[tuple[int, object, list]]  # (column index, its Col, the backend's and the field's converters)
    fields: list
    pk_index: int

    def columns(self, alias: str) -> str:
        """`"alias"."column", …` for a SELECT list, in the order `instance` reads them."""
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


def row_layout(model) -> RowLayout:
    """As the ORM's compiler does: the backend's converters for the column's type, then the
    field's own (`from_db_value`, JSONField's decoding for one)."""
    fields = list(model._meta.concrete_fields)
    converters = []
    for index, field in enumerate(fields):
        column = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if found:
            converters.append((index, column, found))
    return RowLayout(
        model,
        [field.attname for field in fields],
        converters,
        fields,
        fields.index(model._meta.pk),
    )


def instances(row, *layouts: RowLayout) -> list:
    """One instance (or None) per layout, from consecutive slices of `row`."""
    found, start = [], 0
    for layout in layouts:
        end = start + len(layout.fields)
        found.append(layout.instance(row[start:end]))
        start = end
    return found
