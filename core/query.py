"""Query-string parameters: declared once, read strictly, documented from the same declaration
(docs/api.md, "Input rules" and "For developers: list filters").

A value is taken as written or refused with a 400 naming the parameter; nothing is quietly
rewritten:

- integers are ASCII digits only: `' 5'`, `'+5'`, `'5.0'` and `'٥'` (an Arabic-Indic five, which
  Python's `int()` would accept) are refused;
- booleans are `true` or `false`;
- a single-valued parameter sent twice (`?take=abc&take=5`) is refused, not read as its last copy;
- an empty value (`?take=`), or an empty item of a list (`?status=ACCEPTED,`), is refused: it is
  neither absent nor a value.

(A NUL anywhere in a query string is refused before any view runs: core.middleware.)

How to declare the filters of a new list: subclass `QueryParameters` with one attribute per
parameter. The attribute's name is the key of the parsed value and, in camelCase, the parameter's
name (`booking_id` → `?bookingId=`, as for body fields); its kind says how a value is read and
how the OpenAPI document describes it. Set the class as the view's `list_filters`; the base
viewset passes the parsed values to the view's `selector` as keyword arguments::

    class PaymentFilters(QueryParameters):
        booking_id = Integer(minimum=1, description="Only the payments of this booking.")
        success = Boolean()

    class PaymentViewSet(ListResourceMixin, ResourceViewSet):
        selector = payment_list  # a list calls payment_list(user=…, user_ids=…, booking_id=5, success=None)
        list_filters = PaymentFilters

`core.openapi.ResourceAutoSchema` documents a view's `list_filters` on its list operation, so the
document lists exactly the parameters that are read; no `OpenApiParameter` is written by hand.
`parse()` reads the parameters in the order they are declared and raises the 400 of the first bad
one. An absent parameter is its `default` (None unless given; a repeatable one: an empty list), or
a 400 when it is `required`.

Kinds: `Integer`, `Boolean`, `Text`, `Choice`, `Instant`, `TimeZone`, `Email`, and
`ListOf(kind)` for a repeatable parameter (`?eventTypeId=1&eventTypeId=2`; with
`comma_separated=True` also `?eventTypeId=1,2`). A new kind subclasses `Parameter` with
`to_python()` (and `schema()` when its values are not text).
"""

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, time, timedelta
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.fields import EmailField

from core.datetimes import is_supported_instant
from core.serializers import to_camel
from core.validators import validate_time_zone

ASCII_DIGITS = re.compile(r"[0-9]+")
MAX_DIGITS = 100  # past this, the value is refused before int() reads it
# An unencoded "+01:00" arrives as " 01:00" (a "+" in a query string is a space).
UNENCODED_PLUS_OFFSET = re.compile(r"(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$")
NOTHING_EARLIER: Mapping[str, Any] = {}


def _refuse(name: str, message: str):
    return ValidationError({name: [message]})


def single(request, name: str, *, required: bool = False) -> str | None:
    """The parameter's one value, or None when absent."""
    values = request.query_params.getlist(name)
    if not values:
        if required:
            raise _refuse(name, "This parameter is required.")
        return None
    if len(values) > 1:
        raise _refuse(name, "Give this parameter once.")
    if values[0] == "":
        raise _refuse(name, "Must not be empty.")
    return values[0]


def is_ascii_integer(raw: str) -> bool:
    """Whether `raw` is a whole number of at most MAX_DIGITS ASCII digits (for ids in paths)."""
    return len(raw) <= MAX_DIGITS and ASCII_DIGITS.fullmatch(raw) is not None


# --- kinds -----------------------------------------------------------------------------------


class Parameter:
    """A kind of query parameter: how one value is read, and its schema in the OpenAPI document.
    A kind holds no name (the declaration gives it), so one kind may serve several parameters."""

    def __init__(self, *, required: bool = False, default: Any = None, description: str = ""):
        self.required = required
        self.default = default
        self.description = description

    def to_python(self, name: str, raw: str, earlier: Mapping[str, Any]) -> Any:
        """The value of `raw` (never empty), or a 400 naming `name`. `earlier`: the values of the
        parameters declared before this one (an instant's time zone)."""
        raise NotImplementedError

    def schema(self) -> dict:
        """The OpenAPI schema of one value: text, unless the kind says otherwise."""
        return {"type": "string"}

    def read(self, request, name: str, earlier: Mapping[str, Any] = NOTHING_EARLIER) -> Any:
        raw = single(request, name, required=self.required)
        return self.default if raw is None else self.to_python(name, raw, earlier)

    def openapi_parameter(self, name: str) -> OpenApiParameter:
        schema = self.schema()
        if self.default is not None:
            schema["default"] = self.default
        return OpenApiParameter(name, schema, required=self.required, description=self.description)


class Integer(Parameter):
    def __init__(self, *, minimum: int | None = None, maximum: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.minimum = minimum
        self.maximum = maximum

    def to_python(self, name, raw, earlier) -> int:
        if not ASCII_DIGITS.fullmatch(raw):
            raise _refuse(name, f"'{raw[:40]}' is not a whole number written with the digits 0-9.")
        if len(raw) > MAX_DIGITS:
            raise _refuse(name, f"Must be at most {self.maximum}." if self.maximum is not None else "Too large.")
        value = int(raw)
        if self.minimum is not None and value < self.minimum:
            raise _refuse(name, f"Must be {self.minimum} or more.")
        if self.maximum is not None and value > self.maximum:
            raise _refuse(name, f"Must be at most {self.maximum}.")
        return value

    def schema(self) -> dict:
        bounds = {"minimum": self.minimum, "maximum": self.maximum}
        return {"type": "integer", **{key: bound for key, bound in bounds.items() if bound is not None}}


class Boolean(Parameter):
    def to_python(self, name, raw, earlier) -> bool:
        if raw not in ("true", "false"):
            raise _refuse(name, f"'{raw[:40]}' is not 'true' or 'false'.")
        return raw == "true"

    def schema(self) -> dict:
        return {"type": "boolean"}


class Text(Parameter):
    """Any text, taken as sent (an exact match, such as an event type's `slug`)."""

    def to_python(self, name, raw, earlier) -> str:
        return raw


class Choice(Parameter):
    """One of `choices`: a list of values, or a mapping from the value sent to the value read
    (`{"createdAt": "created_at"}`). `normalize` makes the match looser where the API promises it
    (bookings' `status` is case-insensitive: `str.upper`); the value read is then the normalized one."""

    def __init__(
        self, choices: Sequence[str] | Mapping[str, Any], *, normalize: Callable[[str], str] | None = None, **kwargs
    ):
        super().__init__(**kwargs)
        self.choices = list(choices)
        self.normalize = normalize or (lambda value: value)
        mapping = choices if isinstance(choices, Mapping) else {choice: self.normalize(choice) for choice in choices}
        self.values = {self.normalize(choice): value for choice, value in mapping.items()}

    def to_python(self, name, raw, earlier) -> Any:
        key = self.normalize(raw)
        if key not in self.values:
            raise _refuse(name, f"'{raw[:40]}' is not one of {', '.join(self.choices)}.")
        return self.values[key]

    def schema(self) -> dict:
        return {"type": "string", "enum": self.choices}


class Instant(Parameter):
    """An ISO 8601 date-time (any offset; none means the zone) or a date (its start in the zone,
    or for an `end` parameter the start of the next day, so that the whole date is included),
    read as an aware date-time in UTC. The zone is UTC, or the value of the parameter declared
    earlier under the attribute `zone_from` (GET /slots: `timeZone`)."""

    def __init__(self, *, end: bool = False, zone_from: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.end = end
        self.zone_from = zone_from

    def to_python(self, name, raw, earlier) -> datetime:
        zone = earlier[self.zone_from] if self.zone_from else "UTC"
        raw = UNENCODED_PLUS_OFFSET.sub(r"\1+\2", raw)
        try:
            # A bare date first: parse_datetime would read "2026-11-23" as its midnight.
            day = parse_date(raw)
            value = None if day is not None else parse_datetime(raw)
        except ValueError:
            value = day = None
        if value is None and day is None:
            raise _refuse(name, f"'{raw}' is not an ISO 8601 date or date-time.")
        try:
            if day is not None:
                value = datetime.combine(day + timedelta(days=1) if self.end else day, time(0))
            if timezone.is_naive(value):
                value = value.replace(tzinfo=ZoneInfo(zone))
            value = value.astimezone(UTC)
        except OverflowError:
            value = None
        if value is None or not is_supported_instant(value):
            raise _refuse(name, f"'{raw}' is outside the supported years 1900–9000.")
        return value


class TimeZone(Parameter):
    """An IANA time zone name (core.validators)."""

    def to_python(self, name, raw, earlier) -> str:
        try:
            validate_time_zone(raw)
        except DjangoValidationError as error:
            raise ValidationError({name: error.messages}) from None
        return raw


class Email(Parameter):
    def to_python(self, name, raw, earlier) -> str:
        try:
            EmailField().run_validation(raw)
        except ValidationError:
            raise _refuse(name, f"'{raw[:80]}' is not an email address.") from None
        return raw


class ListOf(Parameter):
    """A repeatable parameter whose every value is of the kind `item`: `?userId=1&userId=2`, and
    with `comma_separated` also `?status=ACCEPTED, PENDING` (items trimmed, empty items dropped).
    Absent: an empty list."""

    def __init__(self, item: Parameter, *, comma_separated: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.item = item
        self.comma_separated = comma_separated

    def read(self, request, name: str, earlier: Mapping[str, Any] = NOTHING_EARLIER) -> list:
        values = request.query_params.getlist(name)
        if self.comma_separated:
            # As the API has always read such a list (and Cal.com v1 clients send it): items are
            # trimmed, and an empty one (`?status=`, `?status=ACCEPTED,`) is no item.
            values = [part.strip() for value in values for part in value.split(",") if part.strip()]
        if any(value == "" for value in values):
            raise _refuse(name, "Must not be empty.")
        return [self.item.to_python(name, value, earlier) for value in values]

    def schema(self) -> dict:
        return {"type": "array", "items": self.item.schema()}

    def openapi_parameter(self, name: str) -> OpenApiParameter:
        return OpenApiParameter(name, self.schema(), description=self.description, explode=True, style="form")


# --- declarations ----------------------------------------------------------------------------


class QueryParameters:
    """The query parameters of one operation, declared as class attributes (see the module
    docstring); a subclass inherits its parents' parameters, declared before its own."""

    declared: ClassVar[dict[str, Parameter]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.declared = {
            attribute: kind
            for klass in reversed(cls.__mro__)
            for attribute, kind in vars(klass).items()
            if isinstance(kind, Parameter)
        }

    @classmethod
    def parse(cls, request) -> dict[str, Any]:
        """The value of every declared parameter by attribute name, or the 400 of the first bad one."""
        values: dict[str, Any] = {}
        for attribute, kind in cls.declared.items():
            values[attribute] = kind.read(request, to_camel(attribute), values)
        return values

    @classmethod
    def openapi_parameters(cls) -> list[OpenApiParameter]:
        return [kind.openapi_parameter(to_camel(attribute)) for attribute, kind in cls.declared.items()]


# --- one parameter read outside a declaration ------------------------------------------------


def query_int(
    request,
    name: str,
    *,
    required: bool = False,
    default: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    """Pagination's `take` and `page` (core.pagination documents them with their bounds)."""
    kind = Integer(required=required, default=default, minimum=minimum, maximum=maximum)
    return kind.read(request, name)


# `?userId=` of every list: read by core.viewsets (`requested_user_ids`), documented by core.openapi.
USER_IDS = ListOf(Integer(), description="System administrators only: filter by user id (repeatable).")


def query_int_list(request, name: str) -> list[int]:
    """A repeatable integer parameter: `?userId=1&userId=2` (core.viewsets' `userId`)."""
    return USER_IDS.read(request, name)


def query_bool(request, name: str) -> bool | None:
    """A boolean sent in the query string of a write (Cal.com v1's cancellation)."""
    return Boolean().read(request, name)
