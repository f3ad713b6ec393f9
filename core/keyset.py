"""Keyset pages (`?after=<cursor>`): the page after a given row, found through the list's order
instead of by skipping rows, so that the millionth row costs what the first does.

A cursor is the list's order and the last row's values of its order columns, signed with the
service's key (`django.core.signing`): opaque to clients, and a cursor that was altered, or given
out by another list or for another order, is a 400 naming the parameter, never another page.

A list can be walked by keyset when its order is plain columns of its model that are never NULL,
ending with the primary key (so that no two rows tie): every list ordered by `id`, and Cal.com's
`sortBy=createdAt` of bookings. Otherwise `nextCursor` is null and `after` is a 400.
"""

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from uuid import UUID

from django.core import signing
from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q, QuerySet
from rest_framework.exceptions import ValidationError

SALT = "core.keyset"
signer = signing.Signer(salt=SALT)


@dataclass(frozen=True)
class Column:
    field: object
    descending: bool

    @property
    def name(self) -> str:
        return ("-" if self.descending else "") + self.field.name


def keyset_columns(queryset: QuerySet) -> list[Column] | None:
    """The queryset's order as columns a keyset can follow, or None when it cannot."""
    meta = queryset.model._meta
    columns = []
    for term in queryset.query.order_by or meta.ordering:
        if not isinstance(term, str) or "__" in term or term == "?":
            return None
        name = term.lstrip("-")
        try:
            field = meta.pk if name == "pk" else meta.get_field(name)
        except FieldDoesNotExist:
            return None
        if not field.concrete or field.null or field.many_to_many:
            return None
        columns.append(Column(field, term.startswith("-")))
    if not columns or columns[-1].field != meta.pk:
        return None
    return columns


def row_values(row, columns: list[Column], queryset: QuerySet) -> list:
    """The order columns' values of `row` (a model instance or a core.fastpath row); read again by
    primary key only when the row does not carry one of them."""
    attnames = [column.field.attname for column in columns]
    found = vars(row)
    if all(attname in found for attname in attnames):
        return [found[attname] for attname in attnames]
    return list(queryset.model._base_manager.filter(pk=row.pk).values_list(*attnames).get())


def encode(list_name: str, columns: list[Column], values: list) -> str:
    """The signed cursor of a row's order values. A value JSON has no type for (a date, a UUID
    primary key, a decimal) is written as text, which its field's `to_python` reads back."""
    return signer.sign_object([list_name, [column.name for column in columns], [_written(value) for value in values]])


def _written(value):
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, UUID | Decimal):
        return str(value)
    return value


def decode(value: str, *, parameter: str, list_name: str, columns: list[Column] | None) -> list:
    """The values a cursor carries, checked against this list and order; else a 400 on `parameter`."""
    try:
        cursor_list, names, written = signer.unsign_object(value)
    except (signing.BadSignature, ValueError, TypeError):
        raise ValidationError(
            {parameter: ["Not a cursor this API gave out; pass pagination.nextCursor exactly as received."]}
        ) from None
    if columns is None:
        raise ValidationError({parameter: ["This list cannot be paged by cursor in this order; use page."]})
    if cursor_list != list_name or names != [column.name for column in columns]:
        raise ValidationError(
            {parameter: ["This cursor belongs to another list or order; use it with the request it came from."]}
        )
    try:
        return [column.field.to_python(item) for column, item in zip(columns, written, strict=True)]
    except (DjangoValidationError, ValueError, TypeError):  # signed by us, so only after a change of code
        raise ValidationError(
            {parameter: ["This cursor is no longer valid; start again from the first page."]}
        ) from None


def after(queryset: QuerySet, columns: list[Column], values: list) -> QuerySet:
    """The rows that come after `values` in the order of `columns` (a row comparison written out,
    so that each column keeps its own direction)."""
    condition = Q()
    for index, column in enumerate(columns):
        ties = {earlier.field.attname: value for earlier, value in zip(columns[:index], values, strict=False)}
        lookup = "lt" if column.descending else "gt"
        condition |= Q(**ties, **{f"{column.field.attname}__{lookup}": values[index]})
    return queryset.filter(condition)
