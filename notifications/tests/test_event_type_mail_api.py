"""An event type's mail settings over Cal.com v2: `emailSettings` (Cal.com's switches) and
`reminders` (this service's extension), written with the event type, shown with it, checked."""

import pytest

from accounts.tests.factories import UserFactory
from calv2.tests.helpers import V2Client
from notifications.models import EventTypeNotifications
from scheduling.models import EventType

pytestmark = pytest.mark.django_db

V2024_06_14 = "2024-06-14"


@pytest.fixture
def v2(api_client):
    return V2Client(api_client, UserFactory())


def test_email_settings_and_reminders_are_written_shown_and_changed(v2):
    created = v2.call(
        "POST",
        "/v2/event-types",
        {
            "lengthInMinutes": 30,
            "title": "Intro",
            "slug": "intro",
            "emailSettings": {"disableEmailsToAttendees": True},
            "reminders": [{"minutesBefore": 60, "to": "both"}],
        },
        version=V2024_06_14,
    )
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    assert data["emailSettings"] == {"disableEmailsToAttendees": True, "disableEmailsToHosts": False}
    assert data["reminders"] == [{"minutesBefore": 60, "to": "both"}]

    changed = v2.call(
        "PATCH",
        f"/v2/event-types/{data['id']}",
        {"emailSettings": {"disableEmailsToHosts": True}, "reminders": [{"minutesBefore": 15}]},
        version=V2024_06_14,
    )
    assert changed.status_code == 200, changed.json()
    shown = v2.call("GET", f"/v2/event-types/{data['id']}", version=V2024_06_14).json()["data"]
    assert shown["emailSettings"] == {"disableEmailsToAttendees": True, "disableEmailsToHosts": True}
    assert shown["reminders"] == [{"minutesBefore": 15, "to": "attendee"}]
    listed = v2.call("GET", "/v2/event-types", version=V2024_06_14).json()["data"]
    assert [each["reminders"] for each in listed] == [[{"minutesBefore": 15, "to": "attendee"}]]


def test_an_event_type_without_settings_shows_the_defaults(v2):
    created = v2.call(
        "POST", "/v2/event-types", {"lengthInMinutes": 30, "title": "T", "slug": "t"}, version=V2024_06_14
    )
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    assert data["emailSettings"] == {"disableEmailsToAttendees": False, "disableEmailsToHosts": False}
    assert data["reminders"] == []
    assert not EventTypeNotifications.objects.exists()


@pytest.mark.parametrize(
    "reminders",
    [
        [{"minutesBefore": 0}],
        [{"minutesBefore": 60, "to": "everyone"}],
        [{"minutesBefore": 60}, {"minutesBefore": 60}],
        [{"minutesBefore": "60"}],
        [{"minutesBefore": 60, "sms": True}],
        [{"minutesBefore": 10081}],
        ["60"],
        [{"minutesBefore": 1}] * 6,
    ],
)
def test_bad_reminders_are_a_400_and_nothing_is_written(v2, reminders):
    response = v2.call(
        "POST",
        "/v2/event-types",
        {"lengthInMinutes": 30, "title": "T", "slug": "bad", "reminders": reminders},
        version=V2024_06_14,
    )
    assert response.status_code == 400, response.json()
    assert response.json()["status"] == "error"
    assert not EventType.objects.exists() and not EventTypeNotifications.objects.exists()
