from datetime import time, timedelta

import factory
from django.utils import timezone

from accounts.tests.factories import UserFactory
from scheduling.models import Attendee, Availability, Booking, BookingStatus, EventType, Host, Schedule

WEEKDAYS = Availability.mask_for([1, 2, 3, 4, 5])


class ScheduleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Schedule
        skip_postgeneration_save = True

    user = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Schedule {n}")
    time_zone = "Europe/Berlin"

    @factory.post_generation
    def availability(schedule, create, extracted, **kwargs):
        """Mon–Fri 09:00–17:00 unless `availability=[...]` rows (dicts) are given."""
        if not create:
            return
        rows = extracted if extracted is not None else [{"days_mask": WEEKDAYS}]
        for row in rows:
            AvailabilityFactory(schedule=schedule, **row)


class AvailabilityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Availability

    schedule = factory.SubFactory(ScheduleFactory, availability=[])
    days_mask = WEEKDAYS
    start_time = time(9, 0)
    end_time = time(17, 0)
    date = None


class EventTypeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EventType

    owner = factory.SubFactory(UserFactory)
    team = None
    title = factory.Sequence(lambda n: f"Meeting {n}")
    slug = factory.Sequence(lambda n: f"meeting-{n}")
    length = 30
    schedule = factory.SubFactory(ScheduleFactory, user=factory.SelfAttribute("..owner"))


class TeamEventTypeFactory(EventTypeFactory):
    """A team event type whose slots come from its hosts (`HostFactory`)."""

    owner = None
    team = factory.SubFactory("accounts.tests.factories.TeamFactory")
    schedule = None
    scheduling_type = "ROUND_ROBIN"


class HostFactory(factory.django.DjangoModelFactory):
    """A host: an accepted member of the event type's team (the membership is made if missing)."""

    class Meta:
        model = Host

    event_type = factory.SubFactory(TeamEventTypeFactory)
    user = factory.SubFactory(UserFactory)
    membership = factory.LazyAttribute(
        lambda host: host.user.memberships.get_or_create(team_id=host.event_type.team_id, defaults={"accepted": True})[
            0
        ]
    )


class BookingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Booking
        skip_postgeneration_save = True

    organizer = factory.SubFactory(UserFactory)
    event_type = factory.SubFactory(EventTypeFactory, owner=factory.SelfAttribute("..organizer"))
    title = factory.LazyAttribute(lambda booking: f"Meeting with {booking.organizer.name}")
    start_time = factory.Sequence(
        lambda n: (timezone.now() + timedelta(days=1 + n)).replace(minute=0, second=0, microsecond=0)
    )
    end_time = factory.LazyAttribute(lambda booking: booking.start_time + timedelta(minutes=30))
    status = BookingStatus.ACCEPTED

    @factory.post_generation
    def attendees(booking, create, extracted, **kwargs):
        if create:
            for row in extracted if extracted is not None else [{}]:
                AttendeeFactory(booking=booking, **row)


class AttendeeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Attendee

    booking = factory.SubFactory(BookingFactory, attendees=[])
    name = factory.Faker("name")
    email = factory.Sequence(lambda n: f"attendee{n}@example.org")
    time_zone = "America/New_York"
