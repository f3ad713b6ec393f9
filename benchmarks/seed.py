"""The fixed benchmark data set (docs/benchmarks.md, What runs), written with bulk inserts and a progress bar.

One user (the caller, with an API key) owns 50 schedules × 3 availability rows, 20 event types,
2,000 bookings (one attendee each), 500 payments and 20 webhooks; a team has 50 accepted members.
Dates are fixed relative to the day of the run (T0 = a week from today, 00:00 UTC), so that the
slot windows are always in the future:

- 1,500 bookings in the past, spread 8 h apart;
- 500 bookings inside the 31 days from T0 (`busy_window`, the busy `GET /v1/slots` line);
- no bookings in the 31-day window of the plain `GET /v1/slots` line (`free_window`);
- `post_slots`: distinct free 15-minute slots, far ahead, one per `POST /v1/bookings` request;
- a CalDAV calendar and an ICS feed connected, 200 cached busy periods each, all inside
  `calendars_window` (31 days without bookings, 15 weeks after the free window).

Four of the 20 webhooks subscribe to BOOKING_CREATED (the rest to other triggers), so each booking
created writes four outbox rows and enqueues four deliveries.
"""

import sys
import time as clock
from datetime import UTC, datetime, time, timedelta

from django.core.management import call_command
from django.db import connection, transaction

WEEKDAYS = (1, 2, 3, 4, 5)
EVERY_DAY = (0, 1, 2, 3, 4, 5, 6)
SCHEDULES = 50
EVENT_TYPES = 20
PAST_BOOKINGS = 1500
BUSY_BOOKINGS = 500
PAYMENTS = 500
WEBHOOKS = 20
TEAM_MEMBERS = 50
POST_SLOTS = 5000
WINDOW_DAYS = 31
POST_WINDOW_DAYS = 70  # POST /bookings takes free slots from T0 + 70 days on
CALENDAR_BUSY_ROWS = 200  # per connected calendar, in `calendars_window`


class Progress:
    """A one-line text progress bar on stderr (no dependency)."""

    def __init__(self, total: int, width: int = 40):
        self.total, self.width, self.done, self.started = total, width, 0, clock.monotonic()

    def step(self, label: str, amount: int = 1) -> None:
        self.done += amount
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        percent = 100 * self.done // self.total
        elapsed = clock.monotonic() - self.started
        sys.stderr.write(f"\r  seed [{bar}] {percent:3d}% {elapsed:5.1f}s {label:<28}")
        if self.done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _anchor(today: datetime | None = None) -> datetime:
    today = today or datetime.now(UTC)
    return datetime.combine(today.date() + timedelta(days=7), time(0), tzinfo=UTC)


def _availability_rows(index: int):
    """Three rows per schedule; schedule 1 (the POST /bookings one) is open around the clock."""
    if index == 1:
        return [(EVERY_DAY, time(0), time(8)), (EVERY_DAY, time(8), time(16)), (EVERY_DAY, time(16), time(23, 59))]
    return [(WEEKDAYS, time(9), time(12)), (WEEKDAYS, time(13), time(17)), ((6,), time(10), time(14))]


def seed(*, stdout=sys.stdout) -> dict:
    """Wipe the database and write the data set; return what the load generator needs."""
    from accounts.models import Membership, MembershipRole, Team, User
    from accounts.services import api_key_create
    from core.models import App
    from payments.models import Payment, PaymentOption
    from scheduling.models import Attendee, Availability, Booking, BookingStatus, EventType, Schedule
    from webhooks.models import Webhook, WebhookTrigger

    progress = Progress(total=12)
    call_command("flush", interactive=False, verbosity=0)
    progress.step("flushed")
    t0 = _anchor()

    with transaction.atomic():
        user = User.objects.create(
            username="bench",
            name="Bench User",
            email="bench@example.com",
            time_zone="Europe/Berlin",
            password="!bench-no-password",
            bio="The benchmark's caller.",
        )
        _, api_key = api_key_create(user=user, note="benchmarks")
        progress.step("user and API key")

        schedules = Schedule.objects.bulk_create(
            Schedule(user=user, name=f"Schedule {index}", time_zone="Europe/Berlin") for index in range(SCHEDULES)
        )
        Availability.objects.bulk_create(
            Availability(schedule=schedule, days_mask=Availability.mask_for(days), start_time=start, end_time=end)
            for index, schedule in enumerate(schedules)
            for days, start, end in _availability_rows(index)
        )
        user.default_schedule = schedules[0]
        user.save(update_fields=["default_schedule"])
        progress.step("50 schedules × 3 rows")

        event_types = EventType.objects.bulk_create(
            EventType(
                owner=user,
                title=f"Meeting {index}",
                slug=f"meeting-{index}",
                description="A benchmark event type.",
                length=15 if index == 1 else 30,
                slot_interval=15 if index == 1 else None,
                minimum_booking_notice=0 if index == 1 else 120,
                schedule=schedules[index],
            )
            for index in range(EVENT_TYPES)
        )
        progress.step("20 event types")

        bookings = []
        past_start = t0 - timedelta(days=520)
        for index in range(PAST_BOOKINGS):
            start = past_start + timedelta(hours=8 * index)
            status = BookingStatus.CANCELLED if index % 10 == 9 else BookingStatus.ACCEPTED
            bookings.append((start, event_types[index % EVENT_TYPES], status))
        for index in range(BUSY_BOOKINGS):
            # 85 minutes apart: 500 bookings fill 29.5 of the 31 days, at every hour of the day.
            bookings.append((t0 + timedelta(minutes=85 * index), event_types[0], BookingStatus.ACCEPTED))
        booking_rows = Booking.objects.bulk_create(
            Booking(
                organizer=user,
                event_type=event_type,
                title=f"{event_type.title} between Bench User and Guest {index}",
                description="Booked for the benchmark.",
                start_time=start,
                end_time=start + timedelta(minutes=event_type.length),
                status=status,
                location="https://meet.example.com/bench",
                metadata={"source": "bench", "index": index},
            )
            for index, (start, event_type, status) in enumerate(bookings)
        )
        progress.step("2,000 bookings")
        Attendee.objects.bulk_create(
            Attendee(
                booking=booking,
                name=f"Guest {index}",
                email=f"guest{index}@example.com",
                time_zone="America/New_York",
            )
            for index, booking in enumerate(booking_rows)
        )
        progress.step("2,000 attendees")

        stripe, _ = App.objects.get_or_create(slug="stripe", defaults={"name": "Stripe", "categories": ["payment"]})
        Payment.objects.bulk_create(
            Payment(
                uid=f"pay_bench_{index:04d}",
                app=stripe,
                booking=booking_rows[index],
                organizer_id=booking_rows[index].organizer_id,
                amount=5000,
                fee=175,
                currency="usd",
                success=index % 2 == 0,
                refunded=index % 10 == 0,
                data={"charge": f"ch_bench_{index:04d}"},
                external_id=f"pi_bench_{index:04d}",
                payment_option=PaymentOption.ON_BOOKING,
            )
            for index in range(PAYMENTS)
        )
        progress.step("500 payments")

        other_triggers = [trigger for trigger in WebhookTrigger.values if trigger != WebhookTrigger.BOOKING_CREATED]
        Webhook.objects.bulk_create(
            Webhook(
                user=user,
                subscriber_url=f"https://hooks.example.com/bench/{index}",
                event_triggers=(
                    [WebhookTrigger.BOOKING_CREATED, WebhookTrigger.BOOKING_CANCELLED]
                    if index % 5 == 0
                    else [other_triggers[index % len(other_triggers)]]
                ),
                secret=f"bench-secret-{index}",
            )
            for index in range(WEBHOOKS)
        )
        progress.step("20 webhooks")

        team = Team.objects.create(name="Bench team", slug="bench-team")
        members = User.objects.bulk_create(
            User(
                username=f"member{index}",
                name=f"Member {index}",
                email=f"member{index}@example.com",
                password="!bench-no-password",
            )
            for index in range(1, TEAM_MEMBERS)
        )
        Membership.objects.bulk_create(
            [Membership(user=user, team=team, accepted=True, role=MembershipRole.OWNER)]
            + [Membership(user=member, team=team, accepted=True, role=MembershipRole.MEMBER) for member in members]
        )
        progress.step("team of 50")
        _connected_calendars(user, t0)
        progress.step("2 connected calendars")

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    progress.step("ANALYZE")

    seeded = _seeded(user=user, api_key=api_key, team=team, schedule=schedules[0], event_types=event_types, t0=t0)
    progress.step("5,000 free slots")
    return seeded


def seeded_caller() -> dict:
    """What `seed()` returned, read back from a database it seeded (for a benchmark that reuses
    one): the same ids and windows, a new API key, and the POST slots still free now."""
    from accounts.models import Membership, User
    from accounts.services import api_key_create
    from scheduling.models import Booking, EventType

    user = User.objects.get(username="bench")
    event_types = list(EventType.objects.filter(owner=user).order_by("pk")[:2])
    # T0 is the start of the busy window: the earliest of its bookings, the latest of event type 0's.
    busy = Booking.objects.filter(event_type=event_types[0], organizer=user).order_by("-start_time")
    t0 = busy.values_list("start_time", flat=True)[BUSY_BOOKINGS - 1]
    _, api_key = api_key_create(user=user, note="benchmarks")
    return _seeded(
        user=user,
        api_key=api_key,
        team=Membership.objects.get(user=user).team,
        schedule=user.default_schedule,
        event_types=event_types,
        t0=t0,
    )


def _seeded(*, user, api_key: str, team, schedule, event_types: list, t0: datetime) -> dict:
    from scheduling.models import Booking, EventType, Schedule
    from scheduling.selectors.slot_sources import slot_request_for
    from scheduling.slots import free_slots

    post_event_type = EventType.objects.select_related("owner", "schedule").get(pk=event_types[1].pk)
    post_start = t0 + timedelta(days=POST_WINDOW_DAYS)
    slot_request = slot_request_for(
        event_type=post_event_type,
        range_start=post_start,
        range_end=post_start + timedelta(days=62),
        now=datetime.now(UTC),
    )
    post_slots = free_slots(slot_request)[:POST_SLOTS]
    if len(post_slots) < POST_SLOTS:
        raise RuntimeError(f"Only {len(post_slots)} free slots for POST /bookings; expected {POST_SLOTS}.")
    return {
        "api_key": api_key,
        "user_id": user.pk,
        "team_id": team.pk,
        "schedule_id": schedule.pk,
        "slots_event_type_id": event_types[0].pk,
        "post_event_type_id": post_event_type.pk,
        "busy_window": [t0.date().isoformat(), (t0 + timedelta(days=WINDOW_DAYS - 1)).date().isoformat()],
        "free_window": [
            (t0 + timedelta(days=35)).date().isoformat(),
            (t0 + timedelta(days=35 + WINDOW_DAYS - 1)).date().isoformat(),
        ],
        "calendars_window": [day.date().isoformat() for day in _calendars_window(t0)],
        "post_slots": [slot.isoformat().replace("+00:00", "Z") for slot in post_slots],
        "max_ids": {
            "booking": Booking.objects.order_by("-pk").values_list("pk", flat=True).first(),
            "schedule": Schedule.objects.order_by("-pk").values_list("pk", flat=True).first(),
        },
    }


def _calendars_window(t0: datetime) -> tuple[datetime, datetime]:
    """31 days without bookings that start on the free window's weekday, 15 weeks later: the
    same slots, plus the connected calendars' busy time."""
    start = t0 + timedelta(days=35 + 15 * 7)
    return start, start + timedelta(days=WINDOW_DAYS - 1)  # the last day, as the other windows end


def _connected_calendars(user, t0: datetime) -> None:
    """A CalDAV calendar and an ICS feed of the caller, each with CALENDAR_BUSY_ROWS cached busy
    periods (7 a day) inside the calendars window only, so that the other lines read none. Marked
    read just now and far from due: a beat that runs never tries the made-up servers."""
    from calendars import crypto
    from calendars.models import BusyTime, CalendarConnection, ConnectionKind, ExternalCalendar

    start, _ = _calendars_window(t0)
    read_at = datetime.now(UTC) + timedelta(days=3650)
    for offset, (kind, secret) in enumerate(
        (
            (ConnectionKind.CALDAV, {"url": "https://dav.example.invalid/", "username": "bench", "password": "-"}),
            (ConnectionKind.ICS, {"url": "https://feeds.example.invalid/bench.ics"}),
        )
    ):
        connection_row = CalendarConnection.objects.create(
            user=user,
            kind=kind,
            label="bench",
            credentials=crypto.encrypt(secret),
            last_attempt_at=read_at,
            last_success_at=read_at,
        )
        calendar = ExternalCalendar.objects.create(
            connection=connection_row, external_id=f"bench-{kind}", name="Bench", time_zone="Europe/Berlin"
        )
        BusyTime.objects.bulk_create(
            BusyTime(
                user=user,
                calendar=calendar,
                start=start + timedelta(minutes=205 * index + 60 * offset),
                end=start + timedelta(minutes=205 * index + 60 * offset + 45),
                event_uid=f"bench-{kind}-{index}",
            )
            for index in range(CALENDAR_BUSY_ROWS)
        )


def reset_created_rows(seeded: dict) -> None:
    """Remove what POST runs created (schedules, bookings with their attendees and outbox rows) and
    the Celery messages they enqueued, so that every run starts from the same data set."""
    from scheduling.models import Booking, Schedule
    from webhooks.models import WebhookDelivery

    with transaction.atomic():
        WebhookDelivery.objects.all().delete()
        Booking.objects.filter(pk__gt=seeded["max_ids"]["booking"]).delete()
        Schedule.objects.filter(pk__gt=seeded["max_ids"]["schedule"]).delete()
    purge_broker()


def purge_broker() -> None:
    from config.celery import app

    app.control.purge()
