from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from accounts.models import User
from accounts.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a user and print it. The key is shown this once; only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--note", default="", help="What the key is for (shown in the admin).")
        parser.add_argument("--expires-days", type=int, default=None, help="Days until the key stops working.")

    def handle(self, *args, username, note, expires_days, **options):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named '{username}'.")
        if not user.is_active:
            raise CommandError(f"User '{username}' is not active.")
        if expires_days is not None and expires_days <= 0:
            raise CommandError("--expires-days must be a positive number of days.")
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        api_key, raw_key = api_key_create(user=user, note=note, expires_at=expires_at)
        self.stdout.write(raw_key)
        expiry = f", expires {api_key.expires_at:%Y-%m-%d %H:%M} UTC" if api_key.expires_at else ", no expiry"
        self.stderr.write(f"API key #{api_key.pk} for {user.username}{expiry}. Store it now: it is not shown again.")
