"""Back office for schedules (availability as weekday checkboxes), event types and bookings."""

from datetime import time

import pytest
from django.urls import reverse

from accounts.tests.factories import TeamFactory, UserFactory
from scheduling.models import Availability, Booking, Schedule
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


@pytest.fixture
def operator_client(client):
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    assert client.login(username=operator.username, password=PASSWORD)
    return client


def schedule_form(user, rows, **overrides) -> dict:
    data = {
        "user": user.pk,
        "name": "Office hours",
        "time_zone": "Europe/Berlin",
        "availability-TOTAL_FORMS": len(rows),
        "availability-INITIAL_FORMS": 0,
        "availability-MIN_NUM_FORMS": 0,
        "availability-MAX_NUM_FORMS": 1000,
        "event_types-TOTAL_FORMS": 0,
        "event_types-INITIAL_FORMS": 0,
        "event_types-MIN_NUM_FORMS": 0,
        "event_types-MAX_NUM_FORMS": 1000,
    }
    for index, row in enumerate(rows):
        for key, value in row.items():
            data[f"availability-{index}-{key}"] = value
    data.update(overrides)
    return data


def test_operator_creates_a_schedule_with_weekday_checkboxes_and_a_date_override(operator_client):
    user = UserFactory()

    response = operator_client.post(
        reverse("admin:scheduling_schedule_add"),
        schedule_form(
            user,
            [
                {"days": ["1", "2", "3", "4", "5"], "start_time": "09:00", "end_time": "17:00"},
                {"date": "2026-12-24", "start_time": "00:00", "end_time": "00:00"},
            ],
        ),
    )

    assert response.status_code == 302
    schedule = Schedule.objects.get(user=user)
    weekly, override = schedule.availability.order_by("id")
    assert (weekly.days, weekly.start_time, weekly.end_time, weekly.date) == ([1, 2, 3, 4, 5], time(9), time(17), None)
    assert (override.days, str(override.date), override.start_time) == ([], "2026-12-24", time(0))


def test_schedule_page_shows_each_rules_days_as_ticked_boxes(operator_client):
    schedule = ScheduleFactory(availability=[{"days_mask": Availability.mask_for([0, 6])}])

    response = operator_client.get(reverse("admin:scheduling_schedule_change", args=[schedule.pk]))

    form = response.context["inline_admin_formsets"][0].formset.forms[0]
    assert form["days"].value() == [0, 6]
    html = str(form["days"])
    assert 'value="0" id="id_availability-0-days_0" checked' in html
    assert 'value="1" id="id_availability-0-days_1">' in html


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"start_time": "09:00", "end_time": "17:00"}, "days", "at least one day"),
        ({"days": ["1"], "date": "2026-12-24", "start_time": "09:00", "end_time": "17:00"}, "days", "no weekdays"),
        ({"days": ["1"], "start_time": "17:00", "end_time": "09:00"}, "end_time", "after the start"),
        ({"days": ["7"], "start_time": "09:00", "end_time": "17:00"}, "days", "valid choice"),
    ],
)
def test_an_invalid_availability_row_is_refused_and_nothing_is_stored(operator_client, row, field, message):
    response = operator_client.post(reverse("admin:scheduling_schedule_add"), schedule_form(UserFactory(), [row]))

    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors[0]
    assert message in str(errors[field])
    assert not Schedule.objects.exists()
    assert not Availability.objects.exists()


def test_an_invalid_time_zone_is_refused_on_the_schedule_page(operator_client):
    response = operator_client.post(
        reverse("admin:scheduling_schedule_add"), schedule_form(UserFactory(), [], time_zone="Berlin")
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["time_zone"] == ["'Berlin' is not a valid IANA time zone."]
    assert not Schedule.objects.exists()


def test_schedule_list_marks_the_users_default_schedule(operator_client):
    schedule = ScheduleFactory()
    schedule.user.default_schedule = schedule
    schedule.user.save(update_fields=["default_schedule"])
    ScheduleFactory(user=schedule.user)

    response = operator_client.get(reverse("admin:scheduling_schedule_changelist"))

    rows = {row.pk: row for row in response.context["cl"].result_list}
    admin_class = response.context["cl"].model_admin
    assert [admin_class.is_default(row) for row in rows.values()] == [True, False]


def test_event_type_with_both_owner_and_team_is_refused(operator_client):
    event_type, team = EventTypeFactory(), TeamFactory()

    response = operator_client.post(
        reverse("admin:scheduling_eventtype_add"),
        {
            "owner": event_type.owner.pk,
            "team": team.pk,
            "title": "Both",
            "slug": "both",
            "length": 30,
            "price": 0,
            "currency": "usd",
            "minimum_booking_notice": 0,
            "before_event_buffer": 0,
            "after_event_buffer": 0,
        },
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert not event_type.owner.event_types.filter(slug="both").exists()


def test_booking_page_shows_attendees_inline(operator_client):
    booking = BookingFactory(attendees=[{"email": "first@example.org"}, {"email": "second@example.org"}])

    response = operator_client.get(reverse("admin:scheduling_booking_change", args=[booking.pk]))

    emails = {form.instance.email for form in response.context["inline_admin_formsets"][0].formset.forms}
    assert {"first@example.org", "second@example.org"} <= emails


def test_booking_list_searches_by_attendee_email_without_duplicates(operator_client):
    booking = BookingFactory(attendees=[{"email": "dup@example.org"}, {"email": "dup2@example.org"}])
    BookingFactory()

    response = operator_client.get(reverse("admin:scheduling_booking_changelist"), {"q": "dup"})

    assert list(response.context["cl"].result_list) == [booking]
    assert Booking.objects.count() == 2
