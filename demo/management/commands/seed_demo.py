"""Demo data for `make run`: an operator, a user with a team, a schedule, event types, bookings,
payments and an OAuth client, then how to use them.

Idempotent: every row is found by a fixed natural key, and a second run changes nothing. The
credentials are fixed and public (docs/operations.md), so the command refuses to run with DEBUG off
unless told `--force`.
"""

from datetime import datetime, time, timedelta
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import Application

from accounts.authentication import hash_api_key
from accounts.models import ApiKey, Membership, MembershipRole, Team, User, UserRole
from accounts.oauth.services import (
    oauth_client_register,
    oauth_client_reset_secret,
    oauth_client_secret_matches,
    oauth_client_update,
)
from core.models import App
from payments.models import Payment, PaymentOption
from scheduling.models import Attendee, Availability, Booking, BookingStatus, EventType, Schedule

OPERATOR = {"username": "admin", "password": "admin", "email": "admin@demo.example", "name": "Demo Operator"}
DEMO_USER = {"username": "demo", "password": "demo", "email": "demo@demo.example", "name": "Dana Demo"}
TEAM_MEMBER = {"username": "alex", "password": "demo", "email": "alex@demo.example", "name": "Alex Member"}
DEMO_TIME_ZONE = "Europe/Berlin"
DEMO_CLIENT_ID = "demo-client"
DEMO_CLIENT_SECRET = "demo-client-secret-not-for-production"
DEMO_API_KEY = settings.API_KEY_PREFIX + "demo_key_not_for_production"
DEMO_SCOPES = "READ_PROFILE READ_BOOKING"
WEEKDAYS = [1, 2, 3, 4, 5]  # Monday–Friday, 0 = Sunday as in the API


def upcoming_weekday_at(days_ahead: int, hour: int) -> datetime:
    """A weekday `days_ahead` working days from today, at `hour` o'clock in the demo time zone."""
    day = timezone.now().astimezone(ZoneInfo(DEMO_TIME_ZONE)).date()
    while days_ahead:
        day += timedelta(days=1)
        if day.isoweekday() <= 5:
            days_ahead -= 1
    return datetime.combine(day, time(hour), tzinfo=ZoneInfo(DEMO_TIME_ZONE))


class Command(BaseCommand):
    help = "Load idempotent demo data (operator, demo user, team, schedule, bookings, payments, OAuth client)."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="Where the service is served.")
        parser.add_argument("--force", action="store_true", help="Run even with DEBUG off (never in production).")

    def handle(self, *args, base_url: str, force: bool, **options):
        if not settings.DEBUG and not force:
            raise CommandError(
                "seed_demo creates accounts with public passwords; it only runs with DEBUG=1 (or --force)."
            )
        base_url = base_url.rstrip("/")
        redirect_uri = f"{base_url}/demo/callback"
        with transaction.atomic():
            self.seed_people()
            demo_user = User.objects.get(username=DEMO_USER["username"])
            self.seed_scheduling(demo_user)
            self.seed_api_key(demo_user)
            self.seed_oauth_client(redirect_uri)
        self.print_summary(base_url, redirect_uri)

    # --- rows --------------------------------------------------------------------------------

    def user(self, spec: dict, **extra) -> User:
        user, created = User.objects.get_or_create(
            username=spec["username"],
            defaults={"email": spec["email"], "name": spec["name"], "time_zone": DEMO_TIME_ZONE, **extra},
        )
        if created or not user.check_password(spec["password"]):
            user.set_password(spec["password"])
            user.save(update_fields=["password"])
        return user

    def seed_people(self) -> None:
        self.user(OPERATOR, is_staff=True, is_superuser=True, role=UserRole.ADMIN)
        demo_user = self.user(DEMO_USER, verified=True)
        member = self.user(TEAM_MEMBER)
        team, _ = Team.objects.get_or_create(slug="demo-team", defaults={"name": "Demo Team", "bio": "A demo team."})
        for user, role in ((demo_user, MembershipRole.OWNER), (member, MembershipRole.MEMBER)):
            Membership.objects.get_or_create(user=user, team=team, defaults={"role": role, "accepted": True})

    def seed_scheduling(self, demo_user: User) -> None:
        schedule, created = Schedule.objects.get_or_create(
            user=demo_user, name="Working hours", defaults={"time_zone": DEMO_TIME_ZONE}
        )
        if created:
            Availability.objects.create(
                schedule=schedule, days_mask=Availability.mask_for(WEEKDAYS), start_time=time(9), end_time=time(17)
            )
        if demo_user.default_schedule_id is None:
            demo_user.default_schedule = schedule
            demo_user.save(update_fields=["default_schedule"])
        meeting, _ = EventType.objects.get_or_create(
            owner=demo_user,
            slug="30min",
            defaults={"title": "30 min meeting", "length": 30, "schedule": schedule, "description": "A quick chat."},
        )
        consultation, _ = EventType.objects.get_or_create(
            owner=demo_user,
            slug="consultation",
            defaults={"title": "Paid consultation", "length": 60, "schedule": schedule, "price": 5000},
        )
        stripe, _ = App.objects.get_or_create(slug="stripe", defaults={"name": "Stripe", "categories": ["payment"]})

        bookings = [
            # uid, event type, start, status, attendee, payment (uid, success, refunded, option) or None;
            # payment uids short enough for the admin's list to show them whole
            ("demo-booking-1", meeting, upcoming_weekday_at(1, 10), BookingStatus.ACCEPTED, "Bea Guest", None),
            (
                "demo-booking-2",
                consultation,
                upcoming_weekday_at(2, 14),
                BookingStatus.ACCEPTED,
                "Carl Client",
                ("demo_paid", True, False, PaymentOption.ON_BOOKING),
            ),
            (
                "demo-booking-3",
                consultation,
                upcoming_weekday_at(3, 11),
                BookingStatus.PENDING,
                "Dora Prospect",
                ("demo_hold", False, False, PaymentOption.HOLD),
            ),
            (
                "demo-booking-4",
                consultation,
                upcoming_weekday_at(4, 9),
                BookingStatus.CANCELLED,
                "Eli Cancelled",
                ("demo_refund", True, True, PaymentOption.ON_BOOKING),
            ),
        ]
        for uid, event_type, start, status, attendee_name, payment in bookings:
            booking, created = Booking.objects.get_or_create(
                uid=uid,
                defaults={
                    "organizer": demo_user,
                    "event_type": event_type,
                    "title": f"{event_type.title} between {demo_user.name} and {attendee_name}",
                    "start_time": start,
                    "end_time": start + timedelta(minutes=event_type.length),
                    "status": status,
                    "location": "https://meet.demo.example/" + uid,
                    "cancellation_reason": "Plans changed." if status == BookingStatus.CANCELLED else "",
                },
            )
            if created:
                email = attendee_name.split()[0].lower() + "@guest.demo.example"
                Attendee.objects.create(booking=booking, name=attendee_name, email=email, time_zone="America/New_York")
            if payment:
                payment_uid, success, refunded, option = payment
                # One payment per demo booking, whatever uid an older seed gave it.
                Payment.objects.get_or_create(
                    booking=booking,
                    defaults={
                        "uid": payment_uid,
                        "app": stripe,
                        "organizer_id": booking.organizer_id,
                        "amount": event_type.price,
                        "fee": 175,
                        "currency": event_type.currency,
                        "success": success,
                        "refunded": refunded,
                        "payment_option": option,
                        "external_id": "pi_" + payment_uid,
                    },
                )

    def seed_api_key(self, demo_user: User) -> None:
        # A fixed, documented key so that the printed curl line works on every run.
        ApiKey.objects.get_or_create(
            hashed_key=hash_api_key(DEMO_API_KEY),
            defaults={
                "user": demo_user,
                "prefix": DEMO_API_KEY[: len(settings.API_KEY_PREFIX) + 6],
                "note": "demo key (seed_demo)",
            },
        )

    def seed_oauth_client(self, redirect_uri: str) -> None:
        registration = {
            "name": "Demo app",
            "redirect_uris": redirect_uri,
            "client_type": Application.CLIENT_CONFIDENTIAL,
            "logo": "",
            "app_link": "https://demo.example",
            "scope_ceiling": list(settings.SCOPES),
            "suspended": False,
        }
        application = Application.objects.filter(client_id=DEMO_CLIENT_ID).first()
        if application is None:
            oauth_client_register(client_id=DEMO_CLIENT_ID, client_secret=DEMO_CLIENT_SECRET, **registration)
            return
        profile = getattr(application, "profile", None)
        current = {
            "name": application.name,
            "redirect_uris": application.redirect_uris,
            "client_type": application.client_type,
            "logo": profile.logo if profile else None,
            "app_link": profile.app_link if profile else None,
            "scope_ceiling": profile.scope_ceiling if profile else None,
            "suspended": profile.suspended if profile else None,
        }
        if current != registration:
            oauth_client_update(application=application, **registration)
        if not oauth_client_secret_matches(application=application, client_secret=DEMO_CLIENT_SECRET):
            oauth_client_reset_secret(application=application, client_secret=DEMO_CLIENT_SECRET)

    # --- output ------------------------------------------------------------------------------

    def print_summary(self, base_url: str, redirect_uri: str) -> None:
        authorize_query = urlencode(
            {
                "client_id": DEMO_CLIENT_ID,
                "redirect_uri": redirect_uri,
                "response_type": "code",
                "scope": DEMO_SCOPES,
                "state": "demo",
            },
            quote_via=quote,
        )
        lines = [
            "",
            "Demo data is ready (fixed, public credentials: for a local demo only).",
            f"  Admin:            {base_url}/admin/   user {OPERATOR['username']} / password {OPERATOR['password']}",
            f"  Demo user:        {DEMO_USER['username']} / {DEMO_USER['password']}"
            f"  (team 'Demo Team' with {TEAM_MEMBER['username']} / {TEAM_MEMBER['password']})",
            f"  Demo API key:     {DEMO_API_KEY}",
            f"  OAuth client_id:  {DEMO_CLIENT_ID}",
            f"  client_secret:    {DEMO_CLIENT_SECRET}",
            f"  redirect_uri:     {redirect_uri}",
            "  Authorize (sign in as the demo user and allow; the redirect page shows the code and this command):",
            f"    {base_url}/auth/oauth2/authorize?{authorize_query}",
            "  Exchange the code:",
            f"    curl -u {DEMO_CLIENT_ID}:{DEMO_CLIENT_SECRET} -d grant_type=authorization_code"
            f" -d redirect_uri={quote(redirect_uri, safe='')} -d code=CODE {base_url}/api/auth/oauth/token",
            "  Try the API:",
            f"    curl -H 'Authorization: Bearer {DEMO_API_KEY}' {base_url}/v1/bookings",
            "",
        ]
        self.stdout.write("\n".join(lines))
