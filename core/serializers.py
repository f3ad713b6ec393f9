"""Serializer building blocks shared by every resource.

- `ApiSerializer` / `ApiModelSerializer`: fields are declared in snake_case (as in Python) and go
  over the wire in camelCase (`time_zone` → `timeZone`), so the OpenAPI document, the error keys
  and the bodies all agree. Request bodies are strict (contract §1): an unknown field, or a
  read-only one such as `id`, is a 400 naming it.
- Compact embedded objects of contract §4 (`CompactUserSerializer`, …), used inside resources.
"""

from collections.abc import Mapping

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


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


class ApiSerializer(StrictFieldsMixin, CamelCaseMixin, serializers.Serializer):
    pass


class ApiModelSerializer(StrictFieldsMixin, CamelCaseMixin, serializers.ModelSerializer):
    pass


@extend_schema_field(
    {"type": "string", "anyOf": [{"format": "uri"}, {"maxLength": 0}], "description": "A URL, or empty."}
)
class OptionalURLField(serializers.URLField):
    """A URL that may be empty (`""`); the document says so, instead of promising a URI."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", True)
        super().__init__(**kwargs)


# --- Compact embedded objects (contract §4) ------------------------------------------------------


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
