"""Serializer building blocks shared by every resource.

- `ApiSerializer` / `ApiModelSerializer`: fields are declared in snake_case (as in Python) and go
  over the wire in camelCase (`time_zone` → `timeZone`), so the OpenAPI document, the error keys
  and the bodies all agree. Request bodies are strict (docs/api.md, Conventions): an unknown field, or a
  read-only one such as `id`, is a 400 naming it.
- Compact embedded objects (`CompactUserSerializer`, …), used inside resources.
- Strict input (docs/api.md, "Input rules"): their boolean and integer fields take JSON booleans
  and integers as sent (no `"true"`, no `"٥"`); items of a nested list are whole objects even in a
  PATCH; `BoundedJSONField` for free-form JSON.
"""

import re
from collections.abc import Mapping

import orjson
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.fastpath.fields import BuiltOnceFieldsMixin
from core.fastpath.output import FastReadMixin
from core.limits import JsonBounds, inspect_json, limit


def to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class CamelCaseMixin:
    """Renames every field to camelCase on the wire while its `source` stays the Python name."""

    def get_fields(self):
        fields = super().get_fields()
        renamed = {}
        for name, field in fields.items():
            camel = to_camel(name)
            if camel != name and field.source is None:
                field.source = name
            if camel != name and isinstance(field, serializers.SerializerMethodField) and field.method_name is None:
                field.method_name = f"get_{name}"
            renamed[camel] = field
        return renamed


class StrictFieldsMixin:
    """Unknown and read-only keys in a request body are errors, not silently dropped."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            readable = set(self.fields)
            errors = {}
            for key in data:
                if key in writable:
                    continue
                errors[str(key)] = ["This field is read-only." if key in readable else "Unknown field."]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


# --- Strict input (docs/api.md, "Input rules") -------------------------------------------------


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean: DRF's BooleanField also takes `"true"`, `"yes"`, `1` and `0` as booleans."""

    def to_internal_value(self, data):
        if data is True or data is False:
            return data
        self.fail("invalid", input=data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer, or a string of ASCII digits (optionally after `-`): DRF's IntegerField runs
    `int()` on text, which takes `" 5"`, `"+5"` and `"٥"` (an Arabic-Indic five) for 5."""

    def to_internal_value(self, data):
        if isinstance(data, str) and not _INTEGER_TEXT.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


_INTEGER_TEXT = re.compile(r"-?[0-9]{1,18}")
_STRICT_SCALARS = {serializers.BooleanField: StrictBooleanField, serializers.IntegerField: StrictIntegerField}


def _make_strict(field) -> None:
    """Plain DRF boolean and integer fields (declared or built from a model) read input strictly.

    The field's class is swapped for its strict subclass, which only changes `to_internal_value`;
    output, options and the OpenAPI type stay as declared. So every serializer of the API reads
    booleans and integers the same way without each declaration having to remember it."""
    strict = _STRICT_SCALARS.get(type(field))
    if strict is not None:
        field.__class__ = strict
    child = getattr(field, "child", None)
    if isinstance(child, serializers.Field) and not isinstance(child, serializers.BaseSerializer):
        _make_strict(child)


class StrictScalarsMixin:
    def get_fields(self):
        fields = super().get_fields()
        for field in fields.values():
            if not field.read_only:
                _make_strict(field)
        return fields


class WholeItemsMixin:
    """A nested item is a whole object even inside a PATCH.

    DRF lets a partial update skip required fields at every depth, so a replaced list item without
    `startTime` would reach `validate()` without it. A list that replaces the stored one holds
    complete items; only the top-level fields of a PATCH are optional."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping) and self.parent is not None and getattr(self.root, "partial", False):
            missing = [
                name
                for name, field in self.fields.items()
                if field.required and not field.read_only and name not in data
            ]
            if missing:
                raise serializers.ValidationError({name: ["This field is required."] for name in missing})
        return super().to_internal_value(data)


# What every serializer of the API is, before DRF's own class: read fast, input strict and whole,
# fields built once, camelCase on the wire.
API_MIXINS = (
    FastReadMixin,
    StrictFieldsMixin,
    WholeItemsMixin,
    BuiltOnceFieldsMixin,
    StrictScalarsMixin,
    CamelCaseMixin,
)


class ApiSerializer(*API_MIXINS, serializers.Serializer):
    pass


class ApiModelSerializer(*API_MIXINS, serializers.ModelSerializer):
    pass


class BoundedJSONField(serializers.JSONField):
    """Free-form JSON (a booking's `metadata` or `responses`, ...) bounded in every direction, so
    that what is stored can always be rendered and costs little to read back.

    Limits (API_LIMITS): nesting `JSON_FIELD_MAX_DEPTH`, keys per object `JSON_FIELD_MAX_KEYS`,
    items per array `JSON_FIELD_MAX_ITEMS`, characters per string or key
    `JSON_FIELD_MAX_STRING_CHARS`, and the whole value `JSON_FIELD_MAX_BYTES` as compact JSON; no
    NUL anywhere. `object_only=True` (the default) also requires a JSON object at the top."""

    def __init__(self, *, object_only: bool = True, **kwargs):
        self.object_only = object_only
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if self.object_only and not isinstance(data, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        value = super().to_internal_value(data)
        bounds = JsonBounds(
            max_depth=limit("JSON_FIELD_MAX_DEPTH"),
            max_keys=limit("JSON_FIELD_MAX_KEYS"),
            max_items=limit("JSON_FIELD_MAX_ITEMS"),
            max_string_chars=limit("JSON_FIELD_MAX_STRING_CHARS"),
        )
        problem = inspect_json(value, bounds)
        if problem is not None:
            where = f" (at {problem.path})" if problem.path else ""
            raise serializers.ValidationError(f"{problem.message}{where}")
        try:
            size = len(orjson.dumps(value))
        except (TypeError, orjson.JSONEncodeError):
            raise serializers.ValidationError("Must be plain JSON.") from None
        if size > limit("JSON_FIELD_MAX_BYTES"):
            raise serializers.ValidationError(f"Must be at most {limit('JSON_FIELD_MAX_BYTES')} bytes as JSON.")
        return value


# drf-spectacular documents a blank-allowed field with a format as `oneOf: [<the field>, <empty>]`;
# `minLength: 1` keeps the two branches apart, so that `""` matches exactly one of them.
@extend_schema_field({"type": "string", "format": "uri", "minLength": 1, "description": "A URL, or empty."})
class OptionalURLField(serializers.URLField):
    """A URL that may be empty (`""`); the document says so, instead of promising a URI."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", True)
        super().__init__(**kwargs)


# --- Compact embedded objects ---------------------------------------------------------------------


class CompactUserSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)
    name = serializers.CharField(read_only=True)
    email = serializers.EmailField(read_only=True)
    time_zone = serializers.CharField(read_only=True)


class CompactTeamSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)


class CompactEventTypeSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    title = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    length = serializers.IntegerField(read_only=True)


class CompactAppSerializer(ApiSerializer):
    slug = serializers.CharField(read_only=True)
    name = serializers.CharField(read_only=True)


class CompactBookingSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    uid = serializers.CharField(read_only=True)
    title = serializers.CharField(read_only=True)
    start_time = serializers.DateTimeField(read_only=True)
    end_time = serializers.DateTimeField(read_only=True)
    status = serializers.CharField(read_only=True)
