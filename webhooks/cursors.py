"""Opaque cursors of the event feed: base64url text a client passes back
as is. A cursor that does not decode is a 400 naming the parameter."""

import base64
import binascii

from rest_framework.exceptions import ValidationError


def _encode(prefix: str, *numbers: int) -> str:
    text = ".".join([prefix, *(str(number) for number in numbers)])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(value: str, prefix: str, count: int, name: str) -> list[int]:
    try:
        text = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("ascii")
        parts = text.split(".")
        if parts[0] != prefix or len(parts) != count + 1:
            raise ValueError(text)
        numbers = [int(part) for part in parts[1:]]
        if any(number < 0 or number >= 2**63 for number in numbers):
            raise ValueError(text)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValidationError(
            {name: ["Not a cursor this API gave out; pass nextCursor exactly as received."]}
        ) from None
    return numbers


def encode_event_cursor(transaction_id: int, row_id: int) -> str:
    return _encode("e", transaction_id, row_id)


def decode_event_cursor(value: str) -> tuple[int, int]:
    transaction_id, row_id = _decode(value, "e", 2, "cursor")
    return transaction_id, row_id
