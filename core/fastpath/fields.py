"""A serializer's fields built once per class (docs/benchmarks.md, "Profiling and what changed")."""

import copy

from django.utils.functional import cached_property
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

from core.fastpath.switch import fast_paths


class BuiltOnceFieldsMixin:
    """A serializer's fields are worked out once per class and copied for each instance.

    DRF builds every field anew for each serializer instance (a deep copy of each declared field
    calls its `__init__` again; a ModelSerializer reads its model's fields again): 0.5 ms for the
    54 fields of a booking's body, on every POST. What `get_fields()` answers here does not depend
    on the instance (the declared fields, camelCase names, strict scalars, v1's extra booking
    fields), so the first instance of a class keeps its result as prototypes, never bound, and
    each instance binds a shallow copy of each: its own object, sharing the prototype's
    validators and messages, which validation only reads; a list's or a dict's item field is copied
    the same way and bound to its own copy, and a nested serializer is deep-copied as DRF does.
    So a serializer of this API must not make `get_fields()` depend on its instance (its data,
    context or partial)."""

    @cached_property
    def fields(self):
        if not fast_paths():  # (`FAST_PATHS`) DRF's own: every field built for this instance
            return super().fields
        prototypes = type(self).__dict__.get("_field_prototypes")
        if prototypes is None:
            prototypes = self.get_fields()
            type(self)._field_prototypes = prototypes
        fields = BindingDict(self)
        for name, field in prototypes.items():
            fields[name] = _instance_copy(field)
        return fields


def _instance_copy(field):
    """A field of its own for one serializer instance (see `BuiltOnceFieldsMixin`)."""
    if isinstance(field, serializers.BaseSerializer):
        own = copy.deepcopy(field)  # made anew from its arguments: keep what get_fields() set on it
        own.source = field.source
        return own
    own = copy.copy(field)
    child = getattr(field, "child", None)
    if isinstance(child, serializers.Field):  # a list's or a dict's item field, bound to its list
        own.child = _instance_copy(child)
        own.child.parent = own  # bound as the prototype's was (the same name and source), to this copy
    return own
