"""Re-encrypt every stored calendar credential with the first of CALENDAR_ENCRYPTION_KEYS, so
that the older keys can then be removed (docs/calendars.md, "Security")."""

from django.core.management.base import BaseCommand
from django.db import transaction

from calendars import crypto
from calendars.models import CalendarConnection


class Command(BaseCommand):
    help = "Re-encrypt calendar credentials with the first configured key."

    def handle(self, *args, **options):
        rotated = 0
        with transaction.atomic():
            for connection in CalendarConnection.objects.select_for_update().only("pk", "credentials"):
                connection.credentials = crypto.rotate(connection.credentials)
                connection.save(update_fields=["credentials"])
                rotated += 1
        self.stdout.write(f"{rotated} connection(s) re-encrypted with the first key.")
