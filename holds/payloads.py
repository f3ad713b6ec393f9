"""The `oooEntry` of Cal.com's OOO_CREATED payload (its `OOOEntryPayloadType`): what the webhook
delivers and what Zapier's `listOOOEntries` shows as sample data."""

import uuid
from datetime import UTC, datetime

from accounts.models import User
from core.datetimes import iso_utc_ms
from holds.models import OutOfOfficeEntry, OutOfOfficeReason


def _person(user) -> dict | None:
    if user is None:
        return None
    return {
        "id": user.pk,
        "name": user.name or None,
        "username": user.username,
        "email": user.email,
        "timeZone": user.time_zone,
    }


def ooo_entry_payload(entry: OutOfOfficeEntry) -> dict:
    """Reads `entry.user` and `entry.to_user` (select them when building many)."""
    return {
        "oooEntry": {
            "id": entry.pk,
            "uuid": str(entry.uuid),
            "start": iso_utc_ms(entry.start),
            "end": iso_utc_ms(entry.end),
            "createdAt": iso_utc_ms(entry.created_at),
            "updatedAt": iso_utc_ms(entry.updated_at),
            "notes": entry.notes or None,
            "reason": {"reason": entry.reason},
            "reasonId": None,
            "user": _person(entry.user),
            "toUser": _person(entry.to_user),
        }
    }


def sample_ooo_payload() -> dict:
    """OOO_CREATED's payload for an unsaved entry with every field filled (a covering user too):
    what payload templates of that trigger are checked against (webhooks.samples)."""
    away = User(pk=1, name="Ada Lovelace", username="ada", email="ada@example.com", time_zone="Europe/London")
    covering = User(pk=2, name="Alan Turing", username="alan", email="alan@example.com", time_zone="Europe/London")
    moment = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    entry = OutOfOfficeEntry(
        pk=1,
        uuid=uuid.UUID(int=1),
        user=away,
        to_user=covering,
        start=datetime(2026, 12, 1, tzinfo=UTC),
        end=datetime(2026, 12, 8, tzinfo=UTC),
        notes="Away for a week",
        reason=OutOfOfficeReason.VACATION,
        created_at=moment,
        updated_at=moment,
    )
    return ooo_entry_payload(entry)
