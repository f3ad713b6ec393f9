"""Every list answers every page: each v1 and v2 list, over rows of each kind of key it orders by
(integer ids, UUID ids, date-times with ties, a membership's two ids), walked one row at a time by
page and by cursor, gives every row once, and the two walks agree.

The v1 lists are found from the URL configuration, so a list added later is walked too (or this
test names it as missing)."""

import re
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from calendars.services import destination_set
from calendars.tests.factories import BookingReferenceFactory, CalendarConnectionFactory, ExternalCalendarFactory
from payments.tests.factories import PaymentFactory
from scheduling.models import Booking
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory, TeamEventTypeFactory
from tests.support.credentials import auth
from webhooks.models import Webhook
from webhooks.tests.factories import WebhookDeliveryFactory, WebhookFactory

pytestmark = pytest.mark.django_db

ROWS = 3


def v1_list_routes() -> set[str]:
    """The route of every v1 list (a viewset whose GET on the collection is `list`)."""
    routes = set()

    def visit(patterns, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                visit(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                actions = getattr(pattern.callback, "actions", {}) or {}
                route = prefix + str(pattern.pattern)
                if actions.get("get") == "list" and route.startswith("v1/") and "\\.(?P<format>" not in route:
                    routes.add(route)

    visit(get_resolver().url_patterns, "")
    return routes


def own_rows(user) -> dict[str, str]:
    """ROWS rows of every v1 list for `user`; the list's path by its route."""
    event_type = EventTypeFactory(owner=user)
    start = timezone.now() + timedelta(days=3)
    for index in range(ROWS):
        ScheduleFactory(user=user)
        EventTypeFactory(owner=user)
        booking = BookingFactory(organizer=user, event_type=event_type, start_time=start + timedelta(hours=index))
        PaymentFactory(booking=booking)
        MembershipFactory(user=user, team=TeamFactory())
        WebhookFactory(user=user, event_type=None)
        WebhookFactory(user=user, event_type=event_type)
        ApiKeyFactory(user=user)
    connection = CalendarConnectionFactory(user=user)
    calendars = [ExternalCalendarFactory(connection=connection) for _ in range(ROWS)]
    destination_set(user=user, calendar=calendars[0])
    for booking in Booking.objects.filter(organizer=user):
        BookingReferenceFactory(booking=booking)
    team = TeamFactory()
    MembershipFactory(user=user, team=team)
    for _ in range(ROWS):
        TeamEventTypeFactory(team=team)
    hook = Webhook.objects.filter(user=user, event_type=None).first()
    for _ in range(ROWS):
        WebhookDeliveryFactory(webhook=hook)
    # Ties in the order of `sortBy=createdAt`: the cursor must carry the id too.
    Booking.objects.filter(organizer=user).update(created_at=timezone.now())
    return {"event_type": str(event_type.pk), "webhook": str(hook.pk), "team": str(team.pk)}


def walk(api_client, headers: dict, path: str, query: dict, *, by_cursor: bool) -> tuple[list, int]:
    """The ids of every page, one row a page, by `page` or by `after`; and the first page's total."""
    ids, page, cursor, total = [], 1, None, None
    for _ in range(50):
        moved = ({"after": cursor} if cursor else {}) if by_cursor else {"page": page}
        response = api_client.get(f"{path}?{urlencode({**query, 'take': 1, **moved})}", **headers)
        assert response.status_code == 200, (path, query, moved, response.content[:500])
        body = response.json()
        [key] = [key for key in body if key != "pagination"]
        ids += [item["id"] for item in body[key]]
        pagination = body["pagination"]
        total = pagination["total"] if total is None else total
        if not pagination["hasNextPage"]:
            assert pagination["nextCursor"] is None
            return ids, total
        cursor, page = pagination["nextCursor"], page + 1
        assert cursor, (path, query)
    raise AssertionError(f"{path} did not end")


V1_QUERIES = {
    "bookings": [{}, {"sortBy": "createdAt", "order": "desc"}, {"status": "accepted"}],
    "webhooks": [{}, {"eventTypeId": "{event_type}"}],
}


# Lists that are not pages of rows: the free slots of a window (one answer, not paged).
NOT_PAGED = {"slots", "why-not", "availability", "connected-calendars"}


def v1_paths(routes: set[str], made: dict[str, str]) -> list[tuple[str, dict]]:
    """Each v1 list's path (a webhook's id in its place) with each query it is walked with."""
    paths = []
    for route in sorted(routes):
        path = "/" + re.sub(r"\(\?P<webhook_id>[^)]*\)", made["webhook"], route.replace("^", "").replace("$", ""))
        path = path.replace("<str:team_id>", made["team"])
        name = path.split("/")[-1]
        if name in NOT_PAGED:
            continue
        for query in V1_QUERIES.get(name, [{}]):
            paths.append((path, {key: value.format(**made) for key, value in query.items()}))
    return paths


def test_every_v1_list_walks_one_row_at_a_time_by_page_and_by_cursor(api_client):
    user = UserFactory()
    headers = auth(user)
    made = own_rows(user)
    routes = v1_list_routes()
    paths = v1_paths(routes, made)
    assert {path.split("/")[-1] for path, _ in paths} == {
        "api-keys",
        "attendees",
        "booking-references",
        "bookings",
        "deliveries",
        "destination-calendars",
        "event-types",
        "hooks",
        "memberships",
        "payments",
        "schedules",
        "selected-calendars",
        "teams",
        "users",
        "webhooks",
    }
    assert sum("/deliveries" in path for path, _ in paths) == 2
    for path, query in paths:
        by_page, total = walk(api_client, headers, path, query, by_cursor=False)
        by_cursor, _ = walk(api_client, headers, path, query, by_cursor=True)
        # A user who is not a system admin sees one user, themselves; a user has one destination.
        single = path.endswith(("/users", "/destination-calendars"))
        assert len(by_page) >= (1 if single else ROWS), (path, query, by_page)
        assert len(set(map(str, by_page))) == len(by_page) == total, (path, query, by_page, total)
        assert by_cursor == by_page, (path, query)


def test_v2_lists_walk_one_row_at_a_time(api_client):
    user = UserFactory()
    headers = auth(user)
    made = own_rows(user)
    bookings = sorted(Booking.objects.filter(organizer=user), key=lambda booking: (booking.start_time, booking.pk))
    expected = [booking.uid for booking in bookings]

    def v2(path: str, version: str | None = None):
        extra = {"HTTP_CAL_API_VERSION": version} if version else {}
        response = api_client.get(path, **headers, **extra)
        assert response.status_code == 200, (path, version, response.content[:500])
        return response.json()

    # Offset pages (2024-08-13): take=1, skip=n.
    uids = []
    for skip in range(len(expected) + 1):
        body = v2(f"/v2/bookings?take=1&skip={skip}", "2024-08-13")
        uids += [booking["uid"] for booking in body["data"]]
        assert body["pagination"]["totalItems"] == len(expected)
        assert body["pagination"]["hasNextPage"] is (skip + 1 < len(expected))
    assert uids == expected

    # The cursor of 2026-05-01 (a start time and an id).
    uids, cursor = [], None
    for _ in range(len(expected) + 1):
        body = v2("/v2/bookings?limit=1" + (f"&cursor={cursor}" if cursor else ""), "2026-05-01")
        uids += [booking["uid"] for booking in body["data"]]
        cursor = body["pagination"]["nextCursor"]
        if not body["pagination"]["hasMore"]:
            break
    assert uids == expected

    # 2024-04-15's cursor, an offset.
    uids, cursor = [], 0
    while cursor is not None:
        body = v2(f"/v2/bookings?limit=1&cursor={cursor}")
        uids += [booking["uid"] for booking in body["data"]["bookings"]]
        cursor = body["data"]["nextCursor"]
    assert sorted(uids) == sorted(expected)

    # Webhooks (UUID ids), the caller's and an event type's.
    for path, owned in (
        ("/v2/webhooks", Webhook.objects.filter(user=user, event_type=None)),
        (f"/v2/event-types/{made['event_type']}/webhooks", Webhook.objects.filter(event_type_id=made["event_type"])),
    ):
        ids = []
        for skip in range(owned.count() + 1):
            ids += [webhook["id"] for webhook in v2(f"{path}?take=1&skip={skip}", "2024-08-13")["data"]]
        assert sorted(ids) == sorted(str(pk) for pk in owned.values_list("pk", flat=True))
