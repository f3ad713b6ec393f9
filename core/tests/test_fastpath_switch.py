"""`FAST_PATHS` off (core.fastpath.switch): each piece of the machinery answers through plain Django
and DRF, with what it answers when on. The API's answers are compared byte for byte by `make test`'s
second pass (conftest.py); these check each piece's own fallback."""

import gc

import pytest
from django.db.models import Q

from accounts.models import User
from accounts.tests.factories import UserFactory
from core.fastpath import read_rows
from core.fastpath.branches import AnyBranch
from core.fastpath.collector import settle_collector
from core.fastpath.compiled_queries import AnyOf, CompiledQuery, CompiledValues, Parameter
from core.fastpath.loaded import record_loaded
from scheduling.models import EventType, Schedule
from scheduling.serializers.schedules import ScheduleSerializer
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db


def field_values(instance) -> list:
    return [getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields]


@pytest.fixture
def fast_paths_off(settings):
    settings.FAST_PATHS = False


def test_the_switch_is_on_by_default(settings):
    assert settings.FAST_PATHS is True


def test_a_compiled_query_off_is_the_orms_evaluation_with_the_same_instances(settings, django_assert_num_queries):
    title = Parameter("title", EventType._meta.get_field("title"))
    compiled = CompiledQuery(EventType.objects.select_related("owner", "schedule__user").filter(title=title))
    intro = EventTypeFactory(title="Intro")
    found = {}
    for switch in (True, False):
        settings.FAST_PATHS = switch
        with django_assert_num_queries(1):
            one = compiled.first(title="Intro")
            related = (one.owner, one.schedule.user)
        found[switch] = (field_values(one), field_values(related[0]), field_values(related[1]))
        assert [item.pk for item in compiled.all(title="Intro")] == [intro.pk]
        assert compiled.first(title="Absent") is None
        with pytest.raises(TypeError, match="'title'"):
            compiled.first()
    assert found[True] == found[False]


def test_compiled_values_off_are_the_orms_rows(settings):
    keys = Parameter("keys", User._meta.pk)
    compiled = CompiledValues(User.objects.filter(AnyOf("id", keys)).order_by("id").values_list("id", "username"))
    users = [UserFactory(), UserFactory(), UserFactory()]
    wanted = [users[0].pk, users[2].pk]
    on = compiled.rows(keys=wanted)
    settings.FAST_PATHS = False
    assert compiled.rows(keys=wanted) == on == [(user.pk, user.username) for user in (users[0], users[2])]


def test_any_branch_off_is_an_or_of_its_branches(settings):
    caller = UserFactory(email="caller@example.org")
    others = [UserFactory(name="Ann"), UserFactory(name="Bob"), UserFactory(name="Ann")]
    branches = [Q(pk=caller.pk), Q(name="Ann")]
    expected = sorted([caller.pk, others[0].pk, others[2].pk])
    answers = {}
    for switch in (True, False):
        settings.FAST_PATHS = switch
        queryset = User.objects.filter(AnyBranch(branches)).order_by("id")
        answers[switch] = (list(queryset.values_list("pk", flat=True)), list(queryset[1:3]), queryset.count())
    assert answers[True] == answers[False]
    assert answers[False][0] == expected and answers[False][2] == 3


def test_read_rows_off_is_the_selectors_queryset(fast_paths_off):
    queryset = Schedule.objects.order_by("id")
    assert read_rows(queryset, ScheduleSerializer) is queryset


def test_record_loaded_off_records_nothing(fast_paths_off, django_assert_num_queries):
    schedule = ScheduleFactory()
    record_loaded(schedule, "event_types", [])
    assert "_prefetched_objects_cache" not in schedule.__dict__
    with django_assert_num_queries(1):
        assert list(schedule.event_types.all()) == []


def test_the_collector_off_keeps_pythons_settings(fast_paths_off):
    frozen, threshold = gc.get_freeze_count(), gc.get_threshold()
    settle_collector()
    assert (gc.get_freeze_count(), gc.get_threshold()) == (frozen, threshold)
