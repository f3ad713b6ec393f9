"""Signatures of a webhook request (docs/webhooks.md, "The request" and "Verifying").

- `X-Cal-Signature-256`: lowercase hex HMAC-SHA256 of the body bytes, keyed with the secret's UTF-8
  bytes (what Cal.com's receivers check).
- Standard Webhooks v1: `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`.
  The key is the base64-decoded part after `whsec_` for a `whsec_` secret, else the secret's UTF-8
  bytes, so a receiver using the `standardwebhooks` package passes a non-`whsec_` secret `s` as
  `whsec_` + base64(s). During a rotation grace period both secrets sign, space-separated.
"""

import base64
import binascii
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def new_message_id() -> str:
    return "msg_" + secrets.token_urlsafe(18)


def standard_webhooks_key(secret: str) -> bytes:
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
        except (binascii.Error, ValueError):
            # Not valid base64 after the prefix: the whole secret is the key, as for any other string.
            pass
    return secret.encode()


def cal_signature(*, secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def standard_signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(standard_webhooks_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_headers(*, secrets_in_use: list[str], message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """`secrets_in_use` is the current secret first, then any still-valid previous one."""
    headers = {"webhook-id": message_id, "webhook-timestamp": str(timestamp)}
    if not secrets_in_use:
        return headers
    headers["X-Cal-Signature-256"] = cal_signature(secret=secrets_in_use[0], body=body)
    headers["webhook-signature"] = " ".join(
        standard_signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body)
        for secret in secrets_in_use
    )
    return headers
