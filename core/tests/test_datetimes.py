"""The one way the service writes a date-time: UTC, whole seconds, `Z` (milliseconds only where a
payload carries JavaScript's `toISOString()`)."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django.conf import settings

from core.datetimes import UTC_FORMAT, iso_utc, iso_utc_ms


def test_iso_utc_writes_utc_whole_seconds_and_z():
    berlin = datetime(2026, 3, 29, 3, 30, 15, 987654, tzinfo=ZoneInfo("Europe/Berlin"))

    assert iso_utc(berlin) == "2026-03-29T01:30:15Z"
    assert iso_utc(None) is None


def test_iso_utc_ms_keeps_milliseconds():
    value = datetime(2026, 1, 31, 9, 0, 0, 120999, tzinfo=UTC)

    assert iso_utc_ms(value) == "2026-01-31T09:00:00.120Z"
    assert iso_utc_ms(None) is None


def test_iso_utc_matches_strftime_also_for_early_years():
    for value in (datetime(1, 1, 1, tzinfo=UTC), datetime(999, 12, 31, 23, 59, 59, tzinfo=UTC)):
        assert iso_utc(value) == value.strftime(UTC_FORMAT)


def test_the_api_answers_in_the_same_format():
    assert settings.REST_FRAMEWORK["DATETIME_FORMAT"] == UTC_FORMAT
