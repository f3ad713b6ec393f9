"""The one read path (core.fastpath): GETs read exactly the columns the output serializer declares,
so that a field added to a serializer is in every answer, and a field the rows cannot read fails
when the plan is made instead of disappearing from GET."""

import re
from datetime import time

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import Prefetch
from django.db.models.functions import Lower
from django.test.utils import CaptureQueriesContext
from rest_framework import serializers

from accounts.tests.factories import UserFactory
from core.fastpath import read_rows, reads
from core.serializers import ApiSerializer, CompactUserSerializer
from scheduling.models import Attendee, Availability, Booking, Schedule
from scheduling.selectors.bookings import booking_list
from scheduling.selectors.schedules import schedule_list
from scheduling.serializers.bookings import BookingSerializer
from scheduling.serializers.schedules import ScheduleSerializer
from scheduling.tests.factories import BookingFactory, ScheduleFactory

pytestmark = pytest.mark.django_db


def test_a_field_added_to_the_serializer_is_read_without_touching_the_selector():
    class WithMore(BookingSerializer):
        organizer_bio = serializers.CharField(source="organizer.bio", read_only=True)
        event_type_label = serializers.SerializerMethodField()

        @reads("event_type.slug", "organizer.username")
        def get_event_type_label(self, booking) -> str:
            return f"{booking.organizer.username}/{booking.event_type.slug}"

    organizer = UserFactory(bio="Runs the clinic", username="clinic")
    BookingFactory(organizer=organizer, event_type__slug="intake", attendees=[{}])

    row = read_rows(booking_list(user=organizer), WithMore).get()

    body = WithMore(row).data
    assert body["organizerBio"] == "Runs the clinic"
    assert body["eventTypeLabel"] == "clinic/intake"
    assert body == WithMore(booking_list(user=organizer).get()).data


def test_a_method_field_that_does_not_say_what_it_reads_is_refused_by_name():
    class Unsaid(ApiSerializer):
        id = serializers.IntegerField(read_only=True)
        shout = serializers.SerializerMethodField()

        def get_shout(self, booking) -> str:
            return booking.title.upper()

    with pytest.raises(ImproperlyConfigured, match=r"Unsaid\.shout: get_shout must say what it reads"):
        list(read_rows(Booking.objects.all(), Unsaid))


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        (serializers.CharField(source="nickname", read_only=True), "Booking has no field or property 'nickname'"),
        (serializers.CharField(source="title.upper", read_only=True), r"Booking\.title is not a relation"),
        (serializers.CharField(source="*", read_only=True), "source='\\*' cannot be read as columns"),
    ],
)
def test_a_source_the_model_cannot_give_is_refused_by_name(declaration, message):
    odd = type("Odd", (ApiSerializer,), {"odd": declaration})
    with pytest.raises(ImproperlyConfigured, match=message):
        read_rows(Booking.objects.all(), odd)


def test_a_nested_object_through_a_null_foreign_key_is_null():
    organizer = UserFactory()
    BookingFactory(organizer=organizer, event_type=None, attendees=[])

    row = read_rows(booking_list(user=organizer), BookingSerializer).get()

    assert row.event_type is None
    assert row.rescheduled_from is None
    assert BookingSerializer(row).data["eventType"] is None
    assert BookingSerializer(row).data["fromReschedule"] is None


def test_a_model_property_is_read_from_all_of_its_models_columns():
    schedule = ScheduleFactory(
        availability=[{"days_mask": 0b1000001, "start_time": time(7), "end_time": time(9)}],
    )

    class Days(ApiSerializer):
        days = serializers.ListField(read_only=True)

    class WithDays(ApiSerializer):
        availability = Days(many=True, read_only=True)

    row = read_rows(Schedule.objects.filter(pk=schedule.pk), WithDays).get()

    assert [item.days for item in row.availability] == [[0, 6]]
    assert {field.attname for field in Availability._meta.concrete_fields} <= set(vars(row.availability[0]))


def test_related_rows_follow_the_selectors_prefetch_filter_and_order():
    organizer = UserFactory()
    booking = BookingFactory(organizer=organizer, attendees=[{"name": "Bea"}, {"name": "Cy"}, {"name": "Al"}])
    queryset = Booking.objects.filter(pk=booking.pk).prefetch_related(
        Prefetch("attendees", queryset=Attendee.objects.exclude(name="Cy").order_by("-name"))
    )

    class Names(ApiSerializer):
        name = serializers.CharField(read_only=True)

    class WithNames(ApiSerializer):
        attendees = Names(many=True, read_only=True)

    assert WithNames(read_rows(queryset, WithNames).get()).data == WithNames(queryset.get()).data
    assert [attendee.name for attendee in read_rows(queryset, WithNames).get().attendees] == ["Bea", "Al"]


class _AttendeeNames(ApiSerializer):
    name = serializers.CharField(read_only=True)


class _WithAttendeeNames(ApiSerializer):
    attendees = _AttendeeNames(many=True, read_only=True)


def _attendee_names(queryset) -> tuple[list[list[str]], list[str]]:
    """The attendees' names of each row, and the SQL of the query that read them."""
    with CaptureQueriesContext(connection) as context:
        rows = list(read_rows(queryset, _WithAttendeeNames))
    return [[attendee.name for attendee in row.attendees] for row in rows], [
        query["sql"] for query in context.captured_queries if "scheduling_attendee" in query["sql"]
    ]


def _keys_left_out(sql: str) -> str:
    return re.sub(r"ANY\('\{[0-9,]*\}'::\w+\[\]\)", "ANY(%s)", sql)


def test_a_plain_ordered_prefetch_is_one_statement_for_every_page_with_the_keys_as_one_array():
    organizer = UserFactory()
    for names in (["Bea", "Al"], ["Cy"], []):
        BookingFactory(organizer=organizer, attendees=[{"name": name} for name in names])
    prefetched = Booking.objects.filter(organizer=organizer).order_by("id")

    def by_name():  # what a selector does: a new queryset on every call
        return prefetched.prefetch_related(Prefetch("attendees", queryset=Attendee.objects.order_by("name")))

    names, first = _attendee_names(by_name())
    fewer, second = _attendee_names(by_name()[:1])

    assert names == [["Al", "Bea"], ["Cy"], []]
    assert fewer == [["Al", "Bea"]]
    # The same statement for a page of 3 and a page of 1 (the log shows the keys written into it).
    assert [_keys_left_out(sql) for sql in first] == [_keys_left_out(sql) for sql in second]
    assert "= ANY(" in first[0]


@pytest.mark.parametrize(
    "related",
    [
        Attendee.objects.exclude(name="Cy").order_by("name"),  # a filter
        Attendee.objects.order_by("name").only("id", "booking_id", "name"),  # deferred columns
        Attendee.objects.order_by("name").reverse(),  # an order turned around
        Attendee.objects.order_by(Lower("name")),  # an expression, not a field name
    ],
    ids=["filter", "only", "reverse", "expression"],
)
def test_any_other_prefetch_is_read_as_the_orm_reads_it(related):
    organizer = UserFactory()
    BookingFactory(organizer=organizer, attendees=[{"name": "bea"}, {"name": "Cy"}, {"name": "al"}])
    queryset = Booking.objects.filter(organizer=organizer).prefetch_related(Prefetch("attendees", queryset=related))

    names, sql = _attendee_names(queryset)

    assert names == [[attendee.name for attendee in queryset.get().attendees.all()]]
    assert "= ANY(" not in sql[0]


def test_a_related_object_shared_by_rows_is_built_once():
    organizer = UserFactory()
    BookingFactory.create_batch(3, organizer=organizer, attendees=[])

    rows = list(read_rows(booking_list(user=organizer), BookingSerializer))

    assert len({id(row.organizer) for row in rows}) == 1


def test_the_page_count_has_none_of_the_row_querys_joins(api_client):
    from accounts.tests.factories import ApiKeyFactory

    api_key = ApiKeyFactory()
    ScheduleFactory.create_batch(2, user=api_key.user)

    with CaptureQueriesContext(connection) as context:  # a list longer than its page is counted
        response = api_client.get("/v1/schedules?take=1", HTTP_AUTHORIZATION=f"Bearer {api_key.raw_key}")

    assert response.status_code == 200
    count = next(query["sql"] for query in context.captured_queries if "COUNT(" in query["sql"])
    assert "JOIN" not in count


def test_rows_are_not_model_instances_and_cost_the_selectors_queries(django_assert_num_queries):
    user = UserFactory()
    ScheduleFactory.create_batch(3, user=user)

    with django_assert_num_queries(3):  # schedules with their user, availability, event types
        rows = list(read_rows(schedule_list(user=user), ScheduleSerializer))

    assert not any(isinstance(row, Schedule) for row in rows)
    assert [row.pk for row in rows] == [row.id for row in rows]
    models = list(schedule_list(user=user))
    assert ScheduleSerializer(rows, many=True).data == ScheduleSerializer(models, many=True).data


def test_a_nested_serializer_reads_only_its_own_fields_of_the_related_model():
    user = UserFactory()
    BookingFactory(organizer=user, attendees=[])

    class Compact(ApiSerializer):
        user = CompactUserSerializer(source="organizer", read_only=True)

    with CaptureQueriesContext(connection) as context:
        read_rows(Booking.objects.filter(organizer=user), Compact).get()

    (query,) = context.captured_queries
    assert "password" not in query["sql"]
    assert '."email"' in query["sql"]


def test_a_row_by_key_is_what_the_list_reads_whatever_the_querysets_filters(django_assert_num_queries):
    from core.fastpath import read_row_by_key
    from core.renderers import ORJSONRenderer

    organizer, stranger = UserFactory(), UserFactory()
    booking = BookingFactory(organizer=organizer, attendees=[{"name": "Bea"}, {"name": "Al"}])
    listed = read_rows(booking_list(user=organizer).filter(pk=booking.pk), BookingSerializer).get()

    read_row_by_key(booking_list(user=stranger), BookingSerializer, booking.pk)  # compiled on first use
    visible = booking_list(user=stranger)  # reads the caller's event types (booking_visibility)
    with django_assert_num_queries(3):  # the booking with its joins, its attendees, its team members
        by_key = read_row_by_key(visible, BookingSerializer, booking.pk)

    render = ORJSONRenderer().render
    assert render(BookingSerializer(by_key).data) == render(BookingSerializer(listed).data)
    assert [attendee.name for attendee in by_key.attendees] == ["Bea", "Al"]
    assert read_row_by_key(booking_list(user=organizer), BookingSerializer, booking.pk + 1000) is None


def test_a_write_answers_what_the_next_get_shows(api_client):
    from accounts.tests.factories import ApiKeyFactory
    from tests.support.credentials import bearer

    key = ApiKeyFactory()
    body = {"name": "Clinic hours", "timeZone": "Europe/Berlin"}
    created = api_client.post("/v1/schedules", body, content_type="application/json", **bearer(key.raw_key))
    schedule = created.json()["schedule"]
    again = api_client.get(f"/v1/schedules/{schedule['id']}", **bearer(key.raw_key)).json()["schedule"]
    patched = api_client.patch(
        f"/v1/schedules/{schedule['id']}", {"name": "Evenings"}, content_type="application/json", **bearer(key.raw_key)
    ).json()["schedule"]

    assert created.status_code == 200 and schedule == again
    assert patched == {**again, "name": "Evenings"}
