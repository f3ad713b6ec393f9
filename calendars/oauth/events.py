"""What both providers' events have in common: an event list becomes busy periods within the
window read, each with the provider's event id, bounded by CALENDARS["MAX_INSTANCES"] like
iCalendar's expansion; the booking's event is updated where it is, else created."""

from collections.abc import Callable, Iterable
from datetime import datetime

from calendars.conf import calendar_setting
from calendars.ical import BusyPeriod
from calendars.oauth.tokens import Session
from calendars.providers import ProviderError


def busy_periods(
    items: Iterable[dict],
    *,
    start: datetime,
    end: datetime,
    is_free: Callable[[dict], bool],
    times: Callable[[dict], tuple[datetime, datetime]],
    uid_key: str,
) -> list[tuple[BusyPeriod, str]]:
    limit = calendar_setting("MAX_INSTANCES")
    periods: list[tuple[BusyPeriod, str]] = []
    for seen, item in enumerate(items, 1):
        if seen > limit:
            raise ProviderError(f"The calendar has more than {limit} event instances in the window read.")
        if is_free(item):
            continue
        try:
            period_start, period_end = times(item)
        except (KeyError, TypeError, ValueError):
            continue  # an event without a readable time blocks nothing
        if period_end <= period_start or period_end <= start or period_start >= end:
            continue
        uid = str(item.get(uid_key) or "")[:500]
        periods.append((BusyPeriod(start=period_start, end=period_end, uid=uid), str(item.get("id") or "")))
    return periods


def update_or_create(
    session: Session,
    *,
    event_id: str,
    update_url: str,
    gone: tuple[int, ...],
    create_url: str,
    created: tuple[int, ...],
    body: dict,
    identity: dict,
    params: dict | None = None,
) -> str:
    """PATCH the event `event_id` at `update_url` (none yet: ""); if there is none, or the provider answers
    one of `gone` (deleted on the calendar meanwhile), create it with `identity` (what makes a
    retried creation the same event). The event's id."""
    if event_id:
        answer = session.call(
            "PATCH",
            update_url,
            "updating the event",
            ok=lambda answer: answer.status in (200, *gone),
            params=params,
            json=body,
        )
        if answer.status == 200:
            return event_id
    answer = session.call(
        "POST",
        create_url,
        "writing the event",
        ok=lambda answer: answer.status in created,
        params=params,
        json={**body, **identity},
    )
    if not answer.data.get("id"):
        raise ProviderError(f"{session.provider.title} answered the new event without an id.")
    return str(answer.data["id"])
