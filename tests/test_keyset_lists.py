"""`?after=` on the big lists (docs/api.md, "Pagination"): walking a list by cursor gives exactly
the rows that walking it by page gives, in the same order, with each list's own filters and order."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory
from payments.tests.factories import PaymentFactory
from scheduling.models import Booking
from scheduling.tests.factories import BookingFactory
from tests.support.credentials import bearer
from webhooks.tests.factories import WebhookDeliveryFactory, WebhookFactory

pytestmark = pytest.mark.django_db


def walk(api_client, raw: str, url: str, key: str, query: dict, parameter: str | None) -> list[int]:
    """The ids of every page, following `pagination.nextCursor` as `parameter`, or by `page`."""
    ids, page, cursor = [], 1, None
    while True:
        if parameter is None:
            moved = {"page": page}
        else:
            moved = {parameter: cursor} if cursor else {}
        response = api_client.get(f"{url}?{urlencode({**query, **moved})}", **bearer(raw))
        assert response.status_code == 200, response.content
        body = response.json()
        ids += [item["id"] for item in body[key]]
        if not body["pagination"]["hasNextPage"]:
            assert body["pagination"]["nextCursor"] is None
            return ids
        cursor, page = body["pagination"]["nextCursor"], page + 1
        assert cursor


@pytest.fixture
def raw(organizer):
    return ApiKeyFactory(user=organizer).raw_key


@pytest.mark.parametrize(
    "query", [{"take": 2}, {"take": 3, "sortBy": "createdAt", "order": "desc"}, {"take": 2, "status": "accepted"}]
)
def test_bookings_by_cursor_are_the_bookings_by_page(api_client, organizer, raw, query):
    start = timezone.now() + timedelta(days=3)
    for index in range(7):
        BookingFactory(organizer=organizer, start_time=start + timedelta(hours=index))
    BookingFactory()  # someone else's
    Booking.objects.filter(organizer=organizer).update(created_at=timezone.now())  # ties in createdAt
    by_page = walk(api_client, raw, "/v1/bookings", "bookings", query, None)
    assert (
        len(by_page) == Booking.objects.filter(organizer=organizer, status__in=["accepted"]).count()
        or len(by_page) == Booking.objects.filter(organizer=organizer).count()
    )
    assert walk(api_client, raw, "/v1/bookings", "bookings", query, "after") == by_page


def test_payments_by_cursor_are_the_payments_by_page(api_client, organizer, raw):
    for _ in range(5):
        PaymentFactory(booking=BookingFactory(organizer=organizer), success=True)
    PaymentFactory(booking=BookingFactory(organizer=organizer), success=False)
    by_page = walk(api_client, raw, "/v1/payments", "payments", {"take": 2, "success": "true"}, None)
    assert len(by_page) == 5
    assert walk(api_client, raw, "/v1/payments", "payments", {"take": 2, "success": "true"}, "after") == by_page


@pytest.mark.parametrize("parameter", ["after", "cursor"])
def test_deliveries_by_cursor_are_the_deliveries_by_page_newest_first(api_client, parameter):
    webhook = WebhookFactory()
    raw = ApiKeyFactory(user=webhook.user).raw_key
    WebhookDeliveryFactory.create_batch(5, webhook=webhook)
    url = f"/v1/webhooks/{webhook.pk}/deliveries"
    by_page = walk(api_client, raw, url, "deliveries", {"take": 2}, None)
    assert by_page == sorted(by_page, reverse=True) and len(by_page) == 5
    assert walk(api_client, raw, url, "deliveries", {"take": 2}, parameter) == by_page


def test_a_bookings_cursor_is_refused_by_payments(api_client, organizer, raw):
    for _ in range(2):
        PaymentFactory(booking=BookingFactory(organizer=organizer))
    cursor = api_client.get("/v1/bookings?take=1", **bearer(raw)).json()["pagination"]["nextCursor"]
    response = api_client.get("/v1/payments", {"after": cursor}, **bearer(raw))
    assert response.status_code == 400
    assert "after" in response.json()["errors"]
