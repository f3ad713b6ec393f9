"""How the service writes a date-time as text: in UTC, as `2026-01-31T09:00:00Z` (whole seconds, `Z`),
in every API answer (DRF's `DATETIME_FORMAT` is `UTC_FORMAT`), webhook payload and error message.
The booking records of the MEETING_* payloads are the one deliberate exception: they carry
JavaScript's `toISOString()`, with milliseconds (`iso_utc_ms`). See docs/api.md."""

from datetime import UTC, datetime

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# Instants the API accepts, in bodies and query strings: far enough from datetime's limits (years 1
# and 9999) that adding days of margin, lengths and buffers (scheduling.slots) can never overflow.
EARLIEST_SUPPORTED = datetime(1900, 1, 1, tzinfo=UTC)
LATEST_SUPPORTED = datetime(9000, 1, 1, tzinfo=UTC)


def is_supported_instant(value: datetime) -> bool:
    return EARLIEST_SUPPORTED <= value <= LATEST_SUPPORTED


def utc_text(value: datetime) -> str:
    """`value`'s wall clock in `UTC_FORMAT`, for a value already in UTC: without `strftime`'s
    trip through the C library, which only writes years below 1000 (unpadded there) as before."""
    if value.year < 1000:
        return value.strftime(UTC_FORMAT)
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}Z"


def iso_utc(value: datetime | None) -> str | None:
    """An aware date-time in UTC, whole seconds, `Z` (Cal.com's `dayjs(...).utc().format()`)."""
    if value is None:
        return None
    return utc_text(value.astimezone(UTC))


def iso_utc_ms(value: datetime | None) -> str | None:
    """A JavaScript Date in JSON (`toISOString()`): milliseconds, `Z`; as Cal.com's booking records."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
