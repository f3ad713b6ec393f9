"""The API's scopes (docs/api.md, Scopes), named once here: `settings.SCOPES` (their descriptions)
and every view's `scopes = {...}` use these constants. `WRITE_X` implies `READ_X`; scope strings may use
spaces or commas."""

import re

from django.conf import settings

READ_PROFILE = "READ_PROFILE"
READ_BOOKING = "READ_BOOKING"
WRITE_BOOKING = "WRITE_BOOKING"
READ_SCHEDULE = "READ_SCHEDULE"
WRITE_SCHEDULE = "WRITE_SCHEDULE"
READ_EVENT_TYPE = "READ_EVENT_TYPE"
WRITE_EVENT_TYPE = "WRITE_EVENT_TYPE"
READ_MEMBERSHIP = "READ_MEMBERSHIP"
WRITE_MEMBERSHIP = "WRITE_MEMBERSHIP"
READ_PAYMENT = "READ_PAYMENT"
READ_WEBHOOK = "READ_WEBHOOK"
WRITE_WEBHOOK = "WRITE_WEBHOOK"
READ_CALENDAR = "READ_CALENDAR"
WRITE_CALENDAR = "WRITE_CALENDAR"


def all_scopes() -> frozenset[str]:
    return frozenset(settings.SCOPES)


def parse_scopes(value: str | None) -> list[str]:
    """Split a scope string on spaces and/or commas, keeping order and dropping repeats."""
    seen: list[str] = []
    for part in re.split(r"[\s,]+", value or ""):
        if part and part not in seen:
            seen.append(part)
    return seen


def expand_scopes(scopes) -> frozenset[str]:
    """The scopes a grant really carries: every WRITE_X brings its READ_X."""
    granted = set(scopes)
    for scope in list(granted):
        if scope.startswith("WRITE_"):
            granted.add("READ_" + scope.removeprefix("WRITE_"))
    return frozenset(granted)
