import secrets
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiKey, User
from core.authentication import hash_api_key


@transaction.atomic
def api_key_create(*, user: User, note: str = "", expires_at: datetime | None = None) -> tuple[ApiKey, str]:
    """Make a key and return it with its one and only clear-text copy; only the hash is stored.

    The fixed prefix lets secret scanners recognise a leaked key.
    """
    raw_key = settings.API_KEY_PREFIX + secrets.token_urlsafe(32)
    api_key = ApiKey(
        user=user,
        prefix=raw_key[: len(settings.API_KEY_PREFIX) + 6],
        hashed_key=hash_api_key(raw_key),
        note=note,
        expires_at=expires_at,
    )
    api_key.full_clean()
    api_key.save()
    return api_key, raw_key


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    api_key.revoked_at = timezone.now()
    api_key.save(update_fields=["revoked_at"])
    return api_key
