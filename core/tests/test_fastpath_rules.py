"""The rules the speed machinery (core/fastpath/) puts on the rest of the code, each checked here
for every resource, so that breaking one fails a test rather than the first request that meets it:

- a serializer's `get_fields()` does not depend on the instance (its fields are built once per
  class: `core.fastpath.fields.BuiltOnceFieldsMixin`);
- a selector prefetches the same relations in the same way for every caller (a write's answer is
  read back with the prefetches kept from the first caller: `core.fastpath.loaded.read_back`);
- a model property read as a field reads only its model's columns (a GET's rows hold nothing
  else: `core.fastpath.rows`).
"""

from collections import defaultdict
from types import SimpleNamespace

import pytest
from django.core.exceptions import EmptyResultSet, ImproperlyConfigured
from django.db.models import Prefetch
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

import config.urls  # noqa: F401 (every view, and so every serializer of the API, is imported)
from accounts.models import MembershipRole, UserRole
from accounts.tests.factories import MembershipFactory, UserFactory
from core.fastpath import row_iterable
from core.fastpath.fields import BuiltOnceFieldsMixin
from core.serializers import ApiModelSerializer
from scheduling.models import Availability
from tests.test_read_plans import READ_VIEWSETS
from webhooks.tests.factories import WebhookFactory


def _subclasses(base: type) -> list[type]:
    found, todo = set(), [base]
    while todo:
        for subclass in todo.pop().__subclasses__():
            if subclass not in found:
                found.add(subclass)
                todo.append(subclass)
    return sorted(found, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


SERIALIZERS = [
    cls
    for cls in _subclasses(BuiltOnceFieldsMixin)
    if issubclass(cls, serializers.BaseSerializer)
    and "tests" not in cls.__module__.split(".")  # the tests' own
    and (hasattr(cls, "Meta") or not issubclass(cls, serializers.ModelSerializer))  # a base
]


def _described(fields: dict) -> dict:
    """What a field list is, as far as its instance could change it."""
    described = {}
    for name, field in fields.items():
        child = getattr(field, "child", None)
        described[name] = (
            type(field),
            field.source,
            field.read_only,
            field.write_only,
            field.required,
            getattr(field, "allow_null", None),
            type(child) if child is not None else None,
        )
    return described


def test_every_api_serializer_is_found():
    names = {cls.__name__ for cls in SERIALIZERS}
    assert {"ScheduleSerializer", "BookingSerializer", "BookingCreateSerializer", "CompactUserSerializer"} <= names
    assert len(SERIALIZERS) > 50


@pytest.mark.parametrize("serializer_class", SERIALIZERS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_get_fields_does_not_depend_on_the_instance(serializer_class):
    """The fields are worked out for the first instance of a class and copied for every other one:
    `get_fields()` must answer the same whatever the instance is given (data, partial, context, an
    object)."""
    variants = [
        {},
        {"data": {}, "partial": True},
        {"data": {"unexpected": 1}, "context": {"request": None, "view": None}},
        {"instance": SimpleNamespace(), "context": {"format": "json"}},
        {"many": False, "read_only": True},
    ]
    first = None
    for arguments in variants:
        serializer = serializer_class(**arguments)
        described = _described(serializer.get_fields())
        if first is None:
            first = described
        assert described == first, f"{serializer_class.__qualname__}.get_fields() changed with {arguments}"


def test_a_get_fields_that_reads_the_instance_is_found():
    """The check above catches a serializer whose fields depend on its instance."""

    class Shifting(ApiModelSerializer):
        class Meta:
            model = Availability
            fields = ["id", "start_time"]

        def get_fields(self):
            fields = super().get_fields()
            if self.partial:
                fields.pop("startTime")
            return fields

    with pytest.raises(AssertionError, match="Shifting.get_fields"):
        test_get_fields_does_not_depend_on_the_instance(Shifting)


def _prefetches(queryset) -> list[tuple]:
    described = []
    for lookup in queryset._prefetch_related_lookups:
        if not isinstance(lookup, Prefetch):
            described.append((lookup, None, None))
            continue
        try:
            sql = None if lookup.queryset is None else str(lookup.queryset.query)
        except EmptyResultSet:
            sql = "nothing"
        described.append((lookup.prefetch_through, lookup.to_attr, sql))
    return described


def _callers() -> dict:
    team_admin = MembershipFactory(role=MembershipRole.ADMIN).user
    MembershipFactory(team=team_admin.memberships.first().team, role=MembershipRole.MEMBER)
    return {
        "a user": UserFactory(),
        "a system admin": UserFactory(role=UserRole.ADMIN),
        "a team admin": team_admin,
        "a team owner": MembershipFactory(role=MembershipRole.OWNER).user,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("view_class", READ_VIEWSETS, ids=lambda view: view.__name__)
def test_a_selector_prefetches_the_same_for_every_caller(view_class):
    """A write's answer is read back with the prefetches kept from the view's first write
    (`read_back`): a selector whose prefetches differed by caller would answer one caller's write
    with another's relations."""
    seen = {}
    for who, user in _callers().items():
        request = Request(APIRequestFactory().post("/"))
        request.user = user
        kwargs = defaultdict(lambda: "1", webhook_id=str(WebhookFactory(user=user).id))
        view = view_class(action="create", request=request, kwargs=kwargs, format_kwarg=None)
        seen[who] = _prefetches(view.get_queryset())
    first = next(iter(seen.values()))
    assert all(prefetches == first for prefetches in seen.values()), seen


def test_a_model_property_read_as_a_field_may_read_only_columns(monkeypatch):
    """A row has its model's columns and the properties the plan copies, nothing else: a property
    that follows a relation, or calls a method, is refused when the plan is made (which
    tests/test_read_plans.py does for every resource), not by the first GET."""
    monkeypatch.setattr(Availability, "schedule_name", property(lambda self: self.schedule.name), raising=False)
    monkeypatch.setattr(Availability, "cleaned", property(lambda self: self.clean()), raising=False)
    monkeypatch.setattr(Availability, "day_count", property(lambda self: len(self.days)), raising=False)

    def serializer_reading(name):
        class Reading(ApiModelSerializer):
            value = serializers.CharField(source=name, read_only=True)

            class Meta:
                model = Availability
                fields = ["id", "value"]

        return Reading

    for name, attribute in (("schedule_name", "schedule"), ("cleaned", "clean")):
        with pytest.raises(ImproperlyConfigured, match=f"Availability.{name} reads '{attribute}'"):
            row_iterable(Availability, serializer_reading(name))
    # Columns, and a property that reads only columns, are what a row has.
    plan = row_iterable(Availability, serializer_reading("day_count"))
    assert {"day_count", "days"} <= plan.node.properties
