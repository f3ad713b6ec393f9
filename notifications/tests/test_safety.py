"""What a booker types cannot become a header or markup; the API cannot be used to mail arbitrary
addresses in bulk (a bound per organizer and per credential, 429 past it); the German catalogue
that ships is the one its source says."""

import gettext
import re
from datetime import datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.core.cache import cache
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from notifications.models import EmailMessage
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

BERLIN = ZoneInfo("Europe/Berlin")


def slot(index: int = 0) -> datetime:
    day = timezone.now().astimezone(BERLIN).date() + timedelta(days=14)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return datetime.combine(day, time(9), tzinfo=BERLIN) + timedelta(minutes=30 * index)


@pytest.fixture
def organizer():
    return UserFactory(name="Ada", email="ada@example.org", time_zone="Europe/Berlin")


def body(event_type, start, name="Grace", email="grace@example.org", **extra):
    return {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "responses": {"name": name, "email": email, **extra},
        "timeZone": "Europe/London",
        "metadata": {},
    }


def test_line_breaks_in_a_name_or_title_never_make_a_header(
    api_client, key, organizer, smtp_server, django_capture_on_commit_callbacks
):
    event_type = EventTypeFactory(owner=organizer, length=30)
    name = "Grace\r\nBcc: victim@example.net\r\nX-Injected: yes"
    request = body(event_type, slot(), name=name)
    request["title"] = "Call\nBcc: other@example.net"
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post("/v1/bookings", request, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    recipients = sorted(address for each in smtp_server.received for address in each.rcpt_tos)
    assert recipients == ["ada@example.org", "grace@example.org"]
    for received in smtp_server.received:
        headers = received.message
        assert headers["Bcc"] is None and headers["X-Injected"] is None
        assert "\n" not in str(headers["Subject"]).strip() and "\n" not in str(headers["To"])
    assert "Grace Bcc: victim@example.net X-Injected: yes" in str(smtp_server.to("grace@example.org")[0].message["To"])


def test_what_a_booker_types_is_escaped_in_the_html_part(
    api_client, key, organizer, smtp_server, django_capture_on_commit_callbacks
):
    event_type = EventTypeFactory(owner=organizer, length=30)
    request = body(event_type, slot(), name='<img src=x onerror="alert(1)">', location="<b>Room</b>")
    request["description"] = "<script>alert(2)</script>"
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post("/v1/bookings", request, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    html = smtp_server.to("ada@example.org")[0].html()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    # The text part says it as typed (it is not markup).
    assert "<script>alert(2)</script>" in smtp_server.to("ada@example.org")[0].text()


def _forget_bounds(*keys):
    hour = int(timezone.now().timestamp()) // 3600
    cache.delete_many([f"notifications:{key}:{hour}" for key in keys] + [f"notifications:{k}:{hour + 1}" for k in keys])


def test_the_organizer_bound_answers_429_and_writes_nothing(
    api_client, key, organizer, settings, smtp_server, django_capture_on_commit_callbacks
):
    settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "MAX_PER_ORGANIZER_PER_HOUR": 2}
    _forget_bounds(f"organizer:{organizer.pk}")
    event_type = EventTypeFactory(owner=organizer, length=30)
    with django_capture_on_commit_callbacks(execute=True):
        first = api_client.post(
            "/v1/bookings", body(event_type, slot(0), guests=["alan@example.org"]), format="json", **bearer(key)
        )
    assert first.status_code == 200, first.json()
    before = (Booking.objects.count(), EmailMessage.objects.count())
    refused = api_client.post("/v1/bookings", body(event_type, slot(1)), format="json", **bearer(key))
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert int(refused["Retry-After"]) > 0
    assert (Booking.objects.count(), EmailMessage.objects.count()) == before
    _forget_bounds(f"organizer:{organizer.pk}")


def test_the_credential_bound_holds_across_organizers_it_books_for(
    api_client, organizer, settings, smtp_server, django_capture_on_commit_callbacks
):
    settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "MAX_PER_API_KEY_PER_HOUR": 1}
    api_key = ApiKeyFactory(user=organizer)
    _forget_bounds(f"credential:api_key:{api_key.pk}")
    event_type = EventTypeFactory(owner=organizer, length=30)
    with django_capture_on_commit_callbacks(execute=True):
        ok = api_client.post("/v1/bookings", body(event_type, slot(0)), format="json", **bearer(api_key.raw_key))
    assert ok.status_code == 200, ok.json()
    refused = api_client.post(
        "/v1/bookings", body(event_type, slot(2), email="x@example.org"), format="json", **bearer(api_key.raw_key)
    )
    assert refused.status_code == 429
    assert Booking.objects.count() == 1
    _forget_bounds(f"credential:api_key:{api_key.pk}")


def test_the_shipped_german_catalogue_matches_its_source():
    directory = Path(__file__).resolve().parent.parent / "locale" / "de" / "LC_MESSAGES"
    source = (directory / "django.po").read_text()
    pairs = re.findall(r'^msgid "(.+)"\nmsgstr "(.+)"$', source, flags=re.MULTILINE)
    assert len(pairs) > 30
    with (directory / "django.mo").open("rb") as compiled:
        catalogue = gettext.GNUTranslations(compiled)
    assert {msgid: catalogue.gettext(msgid) for msgid, _ in pairs} == dict(pairs)
