"""How a GET's rows are written out: `FastReadMixin`, the output half of the read path (the rows
themselves come from `core.fastpath.rows`). Each serializer class's `to_representation` is worked
out once per process into a plan of (key, reader, kind) steps, which writes exactly what DRF's own
`Serializer.to_representation` writes without DRF's per-request field building and per-field
dispatch (docs/benchmarks.md, "Profiling and what changed"). The plan is then written out as one
Python function per class (`_writer`), with its keys, readers and kinds as constants, so that a row
costs one call instead of a loop that dispatches on each field's kind.

One difference from DRF's output, invisible on the wire: a date-time already in UTC, when the API's
format (`core.datetimes.UTC_FORMAT`) and zone are in force, stays a `datetime` (whole seconds) in
`.data`, and the renderer (`core.renderers.ORJSONRenderer`, the API's only renderer) writes it as
the same text DRF would have, `2026-01-31T09:00:00Z`, without a string built per value in Python.
"""

import datetime
import functools
import keyword
import operator
import re
import types
import zoneinfo
from collections.abc import Callable, Mapping

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db.models.manager import BaseManager
from django.utils import timezone
from rest_framework import ISO_8601, serializers
from rest_framework.fields import SkipField, empty
from rest_framework.settings import api_settings

from core.datetimes import UTC_FORMAT, utc_text
from core.fastpath.switch import fast_paths

_SIMPLE_CALLABLES = (types.FunctionType, types.MethodType, functools.partial)
_CONTEXT_FREE_FIELDS = (
    serializers.IntegerField,
    serializers.FloatField,
    serializers.CharField,  # Email, URL, Slug, UUID-as-text are CharFields
    serializers.BooleanField,
    serializers.DateTimeField,
    serializers.DateField,
    serializers.TimeField,
    serializers.JSONField,
    serializers.ChoiceField,
    serializers.ListField,
    serializers.DictField,
    serializers.UUIDField,
    serializers.DecimalField,
    serializers.ReadOnlyField,
)
_READ_PLANS: dict[type, tuple | None] = {}


def _writes_like(field, base) -> bool:
    return isinstance(field, base) and type(field).to_representation is base.to_representation


def _read_plan(serializer_class) -> tuple | None:
    """What `to_representation` does for this class, worked out once per process instead of on
    every request: the declared fields are built (for a ModelSerializer, by model introspection)
    one time, then each output field is an entry (key, attribute reader, kind, field).

    Only fields whose output cannot depend on the request are planned; a serializer with any other
    field keeps DRF's own path (`None`)."""
    if serializer_class in _READ_PLANS:
        return _READ_PLANS[serializer_class]
    plan = None
    try:
        fields = serializer_class().fields
    except Exception:  # noqa: BLE001 - a serializer that cannot be built bare keeps DRF's path
        fields = None
    if fields is not None:
        entries = []
        for key, field in fields.items():
            if field.write_only:
                continue
            read = _reader(field)
            if isinstance(field, serializers.SerializerMethodField):
                entries.append((key, read, "method", field.method_name))
            elif isinstance(field, serializers.ListSerializer) and isinstance(field.child, FastReadMixin):
                entries.append((key, read, "many", type(field.child)))
            elif isinstance(field, FastReadMixin):
                entries.append((key, read, "one", type(field)))
            elif _writes_like(field, serializers.IntegerField):
                entries.append((key, read, "int", field))
            elif _writes_like(field, serializers.CharField):
                entries.append((key, read, "str", field))
            elif _writes_like(field, serializers.BooleanField):
                entries.append((key, read, "bool", field))
            elif _writes_like(field, serializers.DateTimeField) and not hasattr(field, "timezone"):
                entries.append((key, read, "datetime", field))
            elif _writes_like(field, serializers.ListField) and _writes_like(field.child, serializers.IntegerField):
                entries.append((key, read, "ints", field))
            elif isinstance(field, _CONTEXT_FREE_FIELDS):
                entries.append((key, read, "field", field))
            else:
                entries = None
                break
        plan = tuple(entries) if entries is not None else None
        if plan is not None:
            _SOURCES[serializer_class] = {key: fields[key].source_attrs for key, *_ in plan}
    _READ_PLANS[serializer_class] = plan
    return plan


_SOURCES: dict[type, dict[str, list[str]]] = {}
_WRITERS: dict[type, Callable | None] = {}


def _writer(serializer_class) -> Callable | None:
    """The class's plan written out as one function `write(serializer, instance) -> dict`, made once
    per process; None where the class has no plan (DRF's own path).

    Each field becomes a few lines with its key, reader and field as constants: the attribute read
    (`o.start_time`, or the nullable dotted reader), then the value as it is when its type is the
    one the field writes as it is (`None` always), else the same `_other` / `_datetime_text` /
    nested-serializer calls the plan's loop makes. A missing attribute raises out of the function
    and `to_representation` answers with the loop instead, which asks DRF."""
    if serializer_class in _WRITERS:
        return _WRITERS[serializer_class]
    plan = _read_plan(serializer_class)
    if plan is None:
        _WRITERS[serializer_class] = None
        return None
    sources = _SOURCES[serializer_class]
    _WRITERS[serializer_class] = None  # a class nested in itself calls `to_representation`, not a writer in the making
    constants = {
        "_SKIP": _SKIP,
        "_CALLABLES": _SIMPLE_CALLABLES,
        "_DATETIME": datetime.datetime,
        "_UTC": datetime.UTC,
        "_MANAGER": BaseManager,
        "_MISSING": ObjectDoesNotExist,
    }
    lines: list[str] = []
    prelude: list[tuple[str, str]] = []  # (local name, what it is for this serializer), worked out once per instance

    def other(index: int, kind: str, indent: str) -> None:
        lines.append(f"{indent}v = self._other(K{index}, {kind!r}, D{index}, v, o)")
        lines.append(f"{indent}if v is not _SKIP:")
        lines.append(f"{indent}    out[K{index}] = v")

    for index, (key, read, kind, detail) in enumerate(plan):
        constants[f"K{index}"], constants[f"R{index}"], constants[f"D{index}"] = key, read, detail
        if kind == "method":
            lines.append(f"    out[K{index}] = getattr(self, D{index})(o)")
            continue
        path = sources[key]
        if isinstance(read, operator.attrgetter) and all(
            part.isidentifier() and not keyword.iskeyword(part) for part in path
        ):
            lines.append(f"    v = o.{'.'.join(path)}")
        else:
            lines.append(f"    v = R{index}(o)")
        lines.append("    if v is None:")
        lines.append(f"        out[K{index}] = None")
        if kind in ("int", "str"):
            lines.append(f"    elif type(v) is {kind}:")
            lines.append(f"        out[K{index}] = v")
            lines.append("    else:")
            other(index, kind, "        ")
        elif kind == "bool":
            lines.append("    elif v is True or v is False:")
            lines.append(f"        out[K{index}] = v")
            lines.append("    else:")
            other(index, kind, "        ")
        elif kind == "datetime":
            prelude.append((f"N{index}", f"self._utc_native(D{index})"))
            lines.append(f"    elif type(v) is _DATETIME and v.tzinfo is _UTC and v.year >= 1000 and N{index}:")
            lines.append(f"        out[K{index}] = v.replace(microsecond=0) if v.microsecond else v")
            lines.append("    elif type(v) is _DATETIME:")
            lines.append(f"        out[K{index}] = self._datetime_text(D{index}, v)")
            lines.append("    else:")
            other(index, kind, "        ")
        elif kind in ("one", "many"):
            lines.append("    elif isinstance(v, _CALLABLES):")
            other(index, kind, "        ")
            lines.append("    else:")
            prelude.append((f"N{index}", f"self._nested(K{index}, D{index})"))
            lines.append(f"        nested = N{index}")
            # The nested class's own writer is called directly where `to_representation` is this
            # mixin's; an item it cannot write (a missing attribute, a dict) goes the long way.
            direct = detail.to_representation is FastReadMixin.to_representation and _writer(detail) is not None
            if direct:
                constants[f"W{index}"] = _writer(detail)
            write = f"W{index}(nested, {{}})" if direct else "nested.to_representation({})"
            if kind == "one":
                lines.append("        try:")
                lines.append(f"            out[K{index}] = {write.format('v')}")
                lines.append("        except (AttributeError, _MISSING):")
                lines.append(f"            out[K{index}] = nested.to_representation(v)")
            else:
                lines.append("        items = v.all() if isinstance(v, _MANAGER) else v")
                lines.append("        try:")
                lines.append(f"            out[K{index}] = [{write.format('item')} for item in items]")
                lines.append("        except (AttributeError, _MISSING):")
                lines.append(f"            out[K{index}] = [nested.to_representation(item) for item in items]")
        elif kind == "ints":  # ListField(child=IntegerField()), DRF's loop inlined for a list
            lines.append("    elif type(v) is list:")
            lines.append(f"        out[K{index}] = [None if item is None else int(item) for item in v]")
            lines.append("    else:")
            other(index, kind, "        ")
        else:  # "field": the field's own code for anything not None
            lines.append("    elif isinstance(v, _CALLABLES):")
            other(index, kind, "        ")
            lines.append("    else:")
            lines.append(f"        out[K{index}] = D{index}.to_representation(v)")
    lines.append("    return out")
    head = ["def write(self, o):"]
    if prelude:
        names = ", ".join(name for name, _ in prelude)
        head += [
            "    prelude = self.__dict__.get('_prelude')",
            "    if prelude is None:",
            f"        prelude = self.__dict__['_prelude'] = ({', '.join(value for _, value in prelude)},)",
            f"    {names}, = prelude",
        ]
    lines = [*head, "    out = {}", *lines]
    namespace = dict(constants)
    exec(compile("\n".join(lines), f"<writer of {serializer_class.__qualname__}>", "exec"), namespace)  # noqa: S102
    write = namespace["write"]
    write.source = "\n".join(lines)
    _WRITERS[serializer_class] = write
    return write


class FastReadMixin:
    """Output without DRF's per-request field building and per-field dispatch, same result.

    Attributes are read directly; `None` stays `None`; ints, strings and booleans are written as
    they are; date-times as `_datetime_text` says; other fields use their own `to_representation`;
    nested compact objects and lists use the nested serializer's plan. Anything unusual (a dict
    instance, a callable attribute, a missing attribute) goes through DRF's own code for that
    field, so the behaviour is DRF's.
    """

    def to_representation(self, instance):
        if not fast_paths():
            return super().to_representation(instance)
        write = _writer(type(self))
        if write is None or isinstance(instance, Mapping):
            return super().to_representation(instance)
        try:
            return write(self, instance)
        except (AttributeError, ObjectDoesNotExist):  # a missing attribute: the plan's loop says what DRF does
            return self._plan_output(instance)

    def _plan_output(self, instance):
        """The plan as a loop: what the generated writer does, and what it falls back to when an
        attribute is missing (DRF's own code then decides whether the key is left out)."""
        plan = _read_plan(type(self))
        output = {}
        for key, read, kind, detail in plan:
            if kind == "method":
                output[key] = getattr(self, detail)(instance)
                continue
            try:
                value = read(instance)
            except (AttributeError, ObjectDoesNotExist):  # also None before the end of a dotted source
                value = _drf_attribute(self, key, instance)
                if value is _SKIP:
                    continue
            value_type = type(value)
            # Most values are None, or exactly the type their field writes as it is: no dispatch.
            if value is None or (value_type is str and kind == "str") or (value_type is int and kind == "int"):
                output[key] = value
            elif value_type is datetime.datetime and kind == "datetime":
                output[key] = self._datetime_text(detail, value)
            else:
                if isinstance(value, _SIMPLE_CALLABLES):
                    value = _drf_attribute(self, key, instance)
                    if value is _SKIP:
                        continue
                output[key] = self._written(key, kind, detail, value)
        return output

    def _other(self, key, kind, detail, value, instance):
        """A value whose type is not the one its field writes as it is: a callable attribute is
        called as DRF calls it, then the field writes the value (`_written`)."""
        if isinstance(value, _SIMPLE_CALLABLES):
            value = _drf_attribute(self, key, instance)
            if value is _SKIP:
                return _SKIP
        return self._written(key, kind, detail, value)

    def _zone(self):
        """The output zone (`_output_zone`), looked up once per serializer, which lives for one response."""
        zone = self.__dict__.get("_output_zone")
        if zone is None:
            zone = self.__dict__["_output_zone"] = _output_zone()
        return zone

    def _utc_native(self, field) -> bool:
        """Whether `field`'s date-times in UTC can stay `datetime`s for the renderer to write: the
        output zone is UTC and the format is the API's."""
        return self._zone() is datetime.UTC and getattr(field, "format", api_settings.DATETIME_FORMAT) == UTC_FORMAT

    def _written(self, key, kind, detail, value):
        """The value as its field writes it, for the cases the loop does not take directly."""
        if value is None:
            return None
        if kind == "int":
            return int(value)
        if kind == "str":
            return value if type(value) is str else str(value)
        if kind == "bool":
            return value if value is True or value is False else detail.to_representation(value)
        if kind == "datetime":
            return self._datetime_text(detail, value)
        if kind == "ints" and type(value) is list:  # ListField(child=IntegerField()), DRF's loop inlined
            return [None if item is None else int(item) for item in value]
        if kind in ("field", "ints"):
            return detail.to_representation(value)
        if kind == "one":
            return self._nested(key, detail).to_representation(value)
        nested = self._nested(key, detail)  # many
        items = value.all() if isinstance(value, BaseManager) else value
        return [nested.to_representation(item) for item in items]

    def _datetime_text(self, field, value):
        """What DRF's `DateTimeField.to_representation` writes, for a fraction of its cost.

        DRF looks the current time zone up for every value (a context-local read that cost more
        than the formatting: 4 date-times × 100 bookings per page); here it is looked up once per
        serializer, which lives for one response, and a value already in that zone (the database's
        UTC values when the zone is UTC) is not converted. Anything else (naive values, ISO 8601
        output, USE_TZ off) is DRF's own code."""
        zone = self._zone()
        output_format = getattr(field, "format", api_settings.DATETIME_FORMAT)
        if (
            zone is _NAIVE
            or type(value) is not datetime.datetime
            or value.tzinfo is None
            or output_format is None
            or output_format.lower() == ISO_8601
        ):
            return field.to_representation(value)
        if value.tzinfo is not zone:
            try:
                value = value.astimezone(zone)
            except OverflowError:
                return field.to_representation(value)  # DRF's validation error
        if output_format == UTC_FORMAT and zone is datetime.UTC:
            return utc_text(value)
        numeric = _numeric_format(output_format)
        if numeric is not None and value.year >= 1000:  # below, the C library may not pad %Y
            template, read = numeric
            return template % read(value)
        return value.strftime(output_format)

    def _nested(self, key, serializer_class):
        """One bare nested serializer per field and output serializer, sharing its context."""
        cache = self.__dict__.setdefault("_nested_serializers", {})
        nested = cache.get(key)
        if nested is None:
            nested = cache[key] = serializer_class(context=self.context)
        return nested


_SKIP = object()


def _itself(instance):  # source="*"
    return instance


def _reader(field):
    """Reads the field's source from an instance. A dotted source through a nullable relation
    (`rescheduled_from.uid`) gives None where the relation is None, as DRF does for a field that
    allows null and has no default, without DRF's slow path (an exception, then building every
    field of the serializer) for each such object."""
    attrs = field.source_attrs
    if not attrs:
        return _itself
    if len(attrs) == 1 or not field.allow_null or field.default is not empty:
        return operator.attrgetter(".".join(attrs))

    def read(instance):
        for attr in attrs:
            if instance is None:
                return None
            instance = getattr(instance, attr)
        return instance

    return read


_NAIVE = object()  # USE_TZ off: DRF writes naive date-times


def _output_zone():
    """The zone DRF converts date-times to, with `datetime.UTC` standing for the UTC zone (same
    wall clock, same `%z` and `%Z`), which is what the database's values carry."""
    if not settings.USE_TZ:
        return _NAIVE
    zone = timezone.get_current_timezone()
    if isinstance(zone, zoneinfo.ZoneInfo) and zone.key in ("UTC", "Etc/UTC"):
        return datetime.UTC
    return zone


_NUMERIC_DIRECTIVES = {
    "%Y": ("year", "%04d"),
    "%m": ("month", "%02d"),
    "%d": ("day", "%02d"),
    "%H": ("hour", "%02d"),
    "%M": ("minute", "%02d"),
    "%S": ("second", "%02d"),
}


@functools.cache
def _numeric_format(output_format: str) -> tuple[str, operator.attrgetter] | None:
    """A `strftime` format made only of %Y %m %d %H %M %S and plain text (as the API's
    "%Y-%m-%dT%H:%M:%SZ") as a %-template and the attributes it reads; None for any other.
    `strftime` goes through the C library with a time tuple: twice the cost of the template."""
    template, attributes = [], []
    for part in re.split(r"(%.)", output_format):
        if part in _NUMERIC_DIRECTIVES:
            attribute, spec = _NUMERIC_DIRECTIVES[part]
            template.append(spec)
            attributes.append(attribute)
        elif "%" in part:
            return None
        else:
            template.append(part)
    if not attributes:
        return None
    return "".join(template), operator.attrgetter(*attributes)


def _drf_attribute(serializer, key, instance):
    field = serializer.fields[key]
    try:
        return field.get_attribute(instance)
    except SkipField:
        return _SKIP
