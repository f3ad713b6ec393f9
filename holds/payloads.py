"""The `oooEntry` of Cal.com's OOO_CREATED payload (its `OOOEntryPayloadType`): what the webhook
delivers and what Zapier's `listOOOEntries` shows as sample data."""

from core.datetimes import iso_utc_ms
from holds.models import OutOfOfficeEntry


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
