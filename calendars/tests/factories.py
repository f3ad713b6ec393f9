import factory

from accounts.tests.factories import UserFactory
from calendars import crypto
from calendars.models import BookingReference, CalendarConnection, ConnectionKind, ExternalCalendar


class CalendarConnectionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CalendarConnection

    user = factory.SubFactory(UserFactory)
    kind = ConnectionKind.CALDAV
    label = "someone @ dav.example.org"
    credentials = factory.LazyFunction(
        lambda: crypto.encrypt({"url": "https://dav.example.org/", "username": "someone", "password": "s3cret"})
    )


class ExternalCalendarFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ExternalCalendar

    connection = factory.SubFactory(CalendarConnectionFactory)
    external_id = factory.Sequence(lambda n: f"https://dav.example.org/calendars/someone/cal-{n}/")
    name = factory.Sequence(lambda n: f"Calendar {n}")
    time_zone = "Europe/Berlin"


class BookingReferenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = BookingReference

    type = "caldav_calendar"
    uid = factory.Sequence(lambda n: f"event-{n}@example.org")
