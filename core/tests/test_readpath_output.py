"""core.fastpath.output.FastReadMixin writes exactly what DRF's Serializer.to_representation writes."""

import datetime
import functools
import zoneinfo

import pytest
from django.utils import timezone
from rest_framework import serializers

import core.fastpath.output as readpath_output
from accounts.tests.factories import ApiKeyFactory
from core.renderers import ORJSONRenderer
from core.serializers import ApiSerializer, CompactUserSerializer
from scheduling.tests.factories import BookingFactory, ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


class _Row:
    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class ItemSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    label = serializers.CharField(read_only=True)


class SampleSerializer(ApiSerializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    active = serializers.BooleanField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    starts = serializers.TimeField(read_only=True, format="%H:%M:%S")
    owner = CompactUserSerializer(read_only=True, allow_null=True)
    owner_name = serializers.CharField(source="owner.name", read_only=True)
    items = ItemSerializer(many=True, read_only=True)
    tags = serializers.ListField(child=serializers.CharField(), read_only=True)
    days = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    data = serializers.JSONField(read_only=True)
    shout = serializers.SerializerMethodField()
    greeting = serializers.CharField(source="greet", read_only=True)  # a callable: DRF calls it

    def get_shout(self, row) -> str:
        return row.name.upper()


def _drf(serializer_class, instance, many=False):
    original = readpath_output._writer
    readpath_output._writer = lambda serializer_class: None
    try:
        return serializer_class(instance, many=many).data
    finally:
        readpath_output._writer = original


def _wire(data) -> bytes:
    """What the API sends for `data`: the fast path may leave a UTC date-time as a `datetime` for
    the renderer, so outputs are compared as the bytes the renderer writes."""
    return ORJSONRenderer().render(data)


def _rows():
    owner = _Row(id=3, username="ann", name="Ann", email="ann@example.com", time_zone="Europe/Berlin")
    created = datetime.datetime(2026, 11, 20, 9, 30, 15, tzinfo=datetime.UTC)
    return [
        _Row(
            id=1,
            name="first",
            active=True,
            created_at=created,
            starts=datetime.time(9, 0),
            owner=owner,
            items=[_Row(id=7, label="seven"), _Row(id=8, label=8)],
            tags=["a", "b"],
            days=[0, 6, None, True, "3"],  # DRF writes None as None, and int() of the rest
            data={"nested": [1, None]},
            greet=lambda: "hello",
        ),
        # No owner: the nested object is null and the dotted `owner.name` is left out, as DRF does.
        _Row(
            id=2,
            name="second",
            active=0,
            created_at=None,
            starts=None,
            owner=None,
            items=[],
            tags=[],
            days=(1, 2),  # not a list: the field's own code
            data=None,
            greet=functools.partial(lambda count: f"{count} items", 42),
        ),
    ]


def test_fast_output_equals_drf_output_for_values_nesting_nulls_and_method_fields():
    rows = _rows()

    assert _wire(SampleSerializer(rows, many=True).data) == _wire(_drf(SampleSerializer, rows, many=True))
    assert "ownerName" not in SampleSerializer(rows[1]).data
    assert [row["greeting"] for row in SampleSerializer(rows, many=True).data] == ["hello", "42 items"]
    assert _drf(SampleSerializer, rows[0])["createdAt"] == "2026-11-20T09:30:15Z"
    assert _wire(SampleSerializer(rows[0]).data["createdAt"]) == b'"2026-11-20T09:30:15Z"'


def test_the_generated_writer_writes_what_the_plans_loop_writes():
    rows = _rows()
    serializer = SampleSerializer()

    for row in rows:
        assert _wire(serializer.to_representation(row)) == _wire(serializer._plan_output(row))
    assert "v = o.greet\n" in readpath_output._writer(SampleSerializer).source  # the generated path ran


def test_a_missing_attribute_is_left_out_as_drf_leaves_it_out():
    row = _rows()[0]
    del row.__dict__["tags"]

    fast = SampleSerializer(row).data

    assert "tags" not in fast
    assert _wire(fast) == _wire(_drf(SampleSerializer, row))


def test_a_utc_date_time_is_handed_to_the_renderer_whole_seconds_as_drf_writes_it():
    moments = [
        datetime.datetime(2026, 11, 20, 9, 30, 15, 999999, tzinfo=datetime.UTC),
        datetime.datetime(2026, 11, 20, 9, 30, 15, tzinfo=datetime.UTC),
    ]
    rows = [_Row(at=moment) for moment in moments]

    fast = MomentsSerializer(rows, many=True).data

    assert [item["at"] for item in fast] == [moments[1], moments[1]]  # microseconds cut, as strftime cuts them
    assert _wire(fast) == _wire(_drf(MomentsSerializer, rows, many=True))
    assert b'"at":"2026-11-20T09:30:15Z"' in _wire(fast)


class MomentsSerializer(ApiSerializer):
    at = serializers.DateTimeField(read_only=True)
    day_first = serializers.DateTimeField(read_only=True, format="%d.%m.%Y %H:%M %Z%z", source="at")
    iso = serializers.DateTimeField(read_only=True, format="iso-8601", source="at")
    numbers_only = serializers.DateTimeField(read_only=True, format="%Y/%m/%d %H.%M.%S (UTC)", source="at")
    year = serializers.DateTimeField(read_only=True, format="%Y", source="at")
    percent = serializers.DateTimeField(read_only=True, format="%H %% %M", source="at")
    in_tokyo = serializers.DateTimeField(read_only=True, default_timezone=zoneinfo.ZoneInfo("Asia/Tokyo"), source="at")


MOMENTS = [
    datetime.datetime(2026, 11, 20, 9, 30, 15, 123456, tzinfo=datetime.UTC),
    datetime.datetime(2026, 3, 29, 0, 30, tzinfo=zoneinfo.ZoneInfo("UTC")),
    datetime.datetime(2026, 7, 1, 23, 59, 59, tzinfo=zoneinfo.ZoneInfo("America/New_York")),
    datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
    datetime.datetime(2026, 1, 2, 3, 4, 5),  # naive: made aware in the current zone, as DRF does
    "2026-01-02T03:04:05Z",  # already text: written as it is
    datetime.datetime(999, 12, 31, 23, 0, tzinfo=datetime.UTC),  # the C library may not pad the year
]


@pytest.mark.parametrize(
    "zone,first",
    [
        ("UTC", "2026-11-20T09:30:15Z"),
        # DRF writes the current zone's wall clock under the format's literal Z.
        ("Europe/Berlin", "2026-11-20T10:30:15Z"),
        ("Pacific/Chatham", "2026-11-20T23:15:15Z"),
    ],
)
def test_fast_date_times_equal_drfs_in_any_current_zone_format_and_offset(zone, first):
    rows = [_Row(at=moment) for moment in MOMENTS]

    with timezone.override(zone):
        fast = _wire(MomentsSerializer(rows, many=True).data)
        assert fast == _wire(_drf(MomentsSerializer, rows, many=True))
    assert fast.startswith(b'[{"at":"' + first.encode() + b'"')


def test_fast_date_times_are_drfs_without_use_tz(settings):
    settings.USE_TZ = False
    rows = [_Row(at=datetime.datetime(2026, 11, 20, 9, 30, 15)), _Row(at=MOMENTS[2])]

    assert _wire(MomentsSerializer(rows, many=True).data) == _wire(_drf(MomentsSerializer, rows, many=True))


def test_fast_output_of_a_dict_instance_is_drfs():
    row = {"id": 1, "label": "from a dict"}

    assert ItemSerializer(row).data == _drf(ItemSerializer, row) == {"id": 1, "label": "from a dict"}


def test_api_bodies_are_the_same_with_and_without_the_fast_path(api_client):
    api_key = ApiKeyFactory()
    ScheduleFactory(user=api_key.user)
    BookingFactory(organizer=api_key.user)
    headers = bearer(api_key.raw_key)
    paths = ["/v1/me", "/v1/schedules", "/v1/bookings"]

    fast = [api_client.get(path, **headers).content for path in paths]
    original = readpath_output._writer
    readpath_output._writer = lambda serializer_class: None
    try:
        slow = [api_client.get(path, **headers).content for path in paths]
    finally:
        readpath_output._writer = original

    assert fast == slow
    assert all(body.startswith(b'{"') for body in fast)


def test_schedule_rows_read_path_writes_what_the_model_path_writes(django_assert_num_queries):
    from datetime import date, time

    from core.fastpath import read_rows
    from scheduling.selectors.schedules import schedule_list
    from scheduling.serializers.schedules import ScheduleSerializer
    from scheduling.tests.factories import EventTypeFactory

    api_key = ApiKeyFactory()
    schedule = ScheduleFactory(
        user=api_key.user,
        availability=[
            {"days_mask": 0b0100010, "start_time": time(8, 30), "end_time": time(12, 0)},
            {"days_mask": 0, "date": date(2026, 12, 24), "start_time": time(0), "end_time": time(0)},
        ],
    )
    api_key.user.default_schedule = schedule
    api_key.user.save()
    EventTypeFactory(owner=api_key.user, schedule=schedule)
    ScheduleFactory(user=api_key.user)

    with django_assert_num_queries(3):
        rows = list(read_rows(schedule_list(user=api_key.user), ScheduleSerializer))
    models = list(schedule_list(user=api_key.user))

    assert _wire(ScheduleSerializer(rows, many=True).data) == _wire(ScheduleSerializer(models, many=True).data)
    assert ScheduleSerializer(rows[0]).data["availability"][0]["days"] == [1, 5]
    assert ScheduleSerializer(rows[0]).data["isDefault"] is True


def test_schedule_list_costs_the_same_queries_for_1_and_50_schedules(api_client, django_assert_num_queries):
    api_key = ApiKeyFactory()
    headers = bearer(api_key.raw_key)
    ScheduleFactory(user=api_key.user)
    api_client.get("/v1/schedules", **headers)  # lastUsedAt is written once a minute

    # credential, schedules, availability, event types: a list that ends on its page needs no COUNT
    with django_assert_num_queries(4):
        assert len(api_client.get("/v1/schedules?take=50", **headers).json()["schedules"]) == 1
    ScheduleFactory.create_batch(49, user=api_key.user)
    with django_assert_num_queries(4):
        assert len(api_client.get("/v1/schedules?take=50", **headers).json()["schedules"]) == 50
    ScheduleFactory(user=api_key.user)
    with django_assert_num_queries(5):  # one more than the page: counted
        assert api_client.get("/v1/schedules?take=50", **headers).json()["pagination"]["total"] == 51
