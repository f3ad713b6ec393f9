"""Credentials at rest: Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`) with rotation.

`CALENDAR_ENCRYPTION_KEYS` lists Fernet keys: the first encrypts, every one decrypts
(`MultiFernet`), so rotating is: put a new key first, run `manage.py rotate_calendar_keys`, then drop
the old one (docs/calendars.md, "Security"). Unset, one key is derived from SECRET_KEY, so that a
bare `make run` works; a deployment sets its own keys.
"""

import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from calendars.conf import calendar_setting


class CredentialsUnreadable(Exception):
    """The stored credentials were encrypted with a key that is no longer configured."""


def _fernet() -> MultiFernet:
    keys = list(calendar_setting("ENCRYPTION_KEYS"))
    if not keys:
        digest = hashlib.sha256(b"calendars.credentials:" + settings.SECRET_KEY.encode()).digest()
        keys = [base64.urlsafe_b64encode(digest).decode()]
    return MultiFernet([Fernet(key) for key in keys])


def encrypt(secret: dict) -> str:
    return _fernet().encrypt(json.dumps(secret).encode()).decode()


def decrypt(token: str) -> dict:
    try:
        return json.loads(_fernet().decrypt(token.encode()))
    except InvalidToken:
        raise CredentialsUnreadable("The credentials cannot be decrypted with the configured keys.") from None


def rotate(token: str) -> str:
    """The same secret encrypted with the first key."""
    try:
        return _fernet().rotate(token.encode()).decode()
    except InvalidToken:
        raise CredentialsUnreadable("The credentials cannot be decrypted with the configured keys.") from None
