"""Back office for schedules (availability as weekday checkboxes), event types and bookings."""

from datetime import time

import pytest
from django.urls import reverse

from accounts.tests.factories import TeamFactory, UserFactory
from scheduling.models import Availability, Booking, BookingStatus, Schedule
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


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
            **hosts_management_form(),
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


def test_a_users_first_schedule_made_in_the_admin_becomes_their_default(operator_client):
    user = UserFactory()

    operator_client.post(
        reverse("admin:scheduling_schedule_add"),
        schedule_form(user, [{"days": ["1"], "start_time": "08:00", "end_time": "12:00"}]),
    )

    user.refresh_from_db()
    assert user.default_schedule == Schedule.objects.get(user=user)


def test_editing_a_schedule_replaces_its_rules(operator_client):
    schedule = ScheduleFactory(name="Old")
    rule = schedule.availability.get()
    data = schedule_form(
        schedule.user,
        [{"id": rule.pk, "schedule": schedule.pk, "days": ["0", "6"], "start_time": "10:00", "end_time": "14:00"}],
        name="Weekends",
        **{"availability-INITIAL_FORMS": 1},
    )

    response = operator_client.post(reverse("admin:scheduling_schedule_change", args=[schedule.pk]), data)

    assert response.status_code == 302
    schedule.refresh_from_db()
    new_rule = schedule.availability.get()
    assert (schedule.name, new_rule.days, new_rule.start_time, new_rule.end_time) == (
        "Weekends",
        [0, 6],
        time(10),
        time(14),
    )


def test_deleting_the_default_schedule_hands_the_role_to_the_next_one(operator_client):
    default = ScheduleFactory()
    user = default.user
    user.default_schedule = default
    user.save(update_fields=["default_schedule"])
    other = ScheduleFactory(user=user)

    response = operator_client.post(reverse("admin:scheduling_schedule_delete", args=[default.pk]), {"post": "yes"})

    assert response.status_code == 302
    user.refresh_from_db()
    assert user.default_schedule == other
    assert not Schedule.objects.filter(pk=default.pk).exists()


def test_bookings_are_not_added_in_the_admin(operator_client):
    assert operator_client.get(reverse("admin:scheduling_booking_add")).status_code == 403


def test_a_booking_status_cannot_be_edited_directly(operator_client):
    booking = BookingFactory(status=BookingStatus.PENDING)
    url = reverse("admin:scheduling_booking_change", args=[booking.pk])

    response = operator_client.post(
        url,
        {
            "title": "Renamed",
            "description": "",
            "location": "",
            "metadata": "{}",
            "status": "ACCEPTED",
            "attendees-TOTAL_FORMS": 0,
            "attendees-INITIAL_FORMS": 0,
            "attendees-MIN_NUM_FORMS": 0,
            "attendees-MAX_NUM_FORMS": 1000,
        },
    )

    assert response.status_code == 302
    booking.refresh_from_db()
    assert (booking.title, booking.status) == ("Renamed", BookingStatus.PENDING)


def test_cancel_action_cancels_through_the_service_and_emits_the_event(operator_client):
    booking = BookingFactory()
    WebhookFactory(user=booking.organizer, event_triggers=[WebhookTrigger.BOOKING_CANCELLED])

    response = operator_client.post(
        reverse("admin:scheduling_booking_changelist"), {"action": "cancel_bookings", "_selected_action": [booking.pk]}
    )

    assert response.status_code == 302
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CANCELLED
    assert WebhookDelivery.objects.filter(trigger_event=WebhookTrigger.BOOKING_CANCELLED).count() == 1


def test_confirm_action_confirms_pending_bookings_and_reports_the_others(operator_client):
    pending, accepted = BookingFactory(status=BookingStatus.PENDING), BookingFactory()

    response = operator_client.post(
        reverse("admin:scheduling_booking_changelist"),
        {"action": "confirm_bookings", "_selected_action": [pending.pk, accepted.pk]},
        follow=True,
    )

    pending.refresh_from_db()
    accepted.refresh_from_db()
    assert (pending.status, accepted.status) == (BookingStatus.ACCEPTED, BookingStatus.ACCEPTED)
    shown = " ".join(str(message) for message in response.context["messages"])
    assert "only a PENDING booking can be confirmed" in shown
    assert "Confirmed 1 booking(s)." in shown


def test_reject_action_rejects_pending_bookings(operator_client):
    pending = BookingFactory(status=BookingStatus.PENDING)

    operator_client.post(
        reverse("admin:scheduling_booking_changelist"), {"action": "reject_bookings", "_selected_action": [pending.pk]}
    )

    pending.refresh_from_db()
    assert pending.status == BookingStatus.REJECTED


def hosts_management_form(total: int = 0, initial: int = 0) -> dict:
    """The management form of the event type page's hosts inline."""
    return {
        "hosts-TOTAL_FORMS": total,
        "hosts-INITIAL_FORMS": initial,
        "hosts-MIN_NUM_FORMS": 0,
        "hosts-MAX_NUM_FORMS": 1000,
    }


def event_type_form(**overrides) -> dict:
    data = {
        "title": "Intro",
        "slug": "intro",
        "length": 30,
        "price": 0,
        "currency": "usd",
        "minimum_booking_notice": 0,
        "before_event_buffer": 0,
        "after_event_buffer": 0,
        **hosts_management_form(),
    }
    data.update(overrides)
    return data


def test_operator_adds_a_team_event_type_through_the_service(operator_client):
    team = TeamFactory()

    response = operator_client.post(reverse("admin:scheduling_eventtype_add"), event_type_form(team=team.pk))

    assert response.status_code == 302
    assert team.event_types.get().slug == "intro"


def test_an_event_type_with_someone_elses_schedule_is_refused_with_a_message(operator_client):
    owner, stranger_schedule = UserFactory(), ScheduleFactory()

    response = operator_client.post(
        reverse("admin:scheduling_eventtype_add"),
        event_type_form(owner=owner.pk, schedule=stranger_schedule.pk),
        follow=True,
    )

    assert response.status_code == 200
    assert f"Schedule {stranger_schedule.pk} does not exist." in response.content.decode()
    assert not owner.event_types.exists()


def test_an_event_type_slug_taken_by_the_same_owner_is_refused(operator_client):
    existing = EventTypeFactory(slug="intro")

    response = operator_client.post(reverse("admin:scheduling_eventtype_add"), event_type_form(owner=existing.owner.pk))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert existing.owner.event_types.count() == 1
