"""The counting rule of every list (docs/api.md, "Pagination"): `total` is exact up to
COUNT_EXACT_MAX matched rows, and above it an estimate that says so (`totalIsExact: false`, v2's
`totalItemsIsExact`), never less than the bound plus one nor than the rows up to the page read.
Whether there is a next page (`hasNextPage`, `nextCursor`, `Link`) never depends on it.

The bound is set to a few rows here, so both sides of it are a handful of rows."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import UserFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory
from tests.support.credentials import auth
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

BOUND = 5


@pytest.fixture(autouse=True)
def small_bound(settings):
    settings.API_LIMITS = {**settings.API_LIMITS, "COUNT_EXACT_MAX": BOUND}


def own(user, rows: int, *, first_day: int = 2) -> None:
    start = timezone.now() + timedelta(days=first_day)
    for index in range(rows):
        booking = BookingFactory(organizer=user, start_time=start + timedelta(hours=index))
        PaymentFactory(booking=booking)
        WebhookFactory(user=user)


LISTS = [("/v1/bookings", "bookings"), ("/v1/payments", "payments"), ("/v1/webhooks", "webhooks")]


@pytest.mark.parametrize("path,key", LISTS)
def test_a_total_up_to_the_bound_is_exact(api_client, path, key):
    user = UserFactory()
    own(user, BOUND)
    response = api_client.get(f"{path}?take=2", **auth(user))
    assert response.status_code == 200
    pagination = response.json()["pagination"]
    assert (pagination["total"], pagination["totalIsExact"], pagination["hasNextPage"]) == (BOUND, True, True)


@pytest.mark.parametrize("path,key", LISTS)
def test_a_total_over_the_bound_is_an_estimate_that_says_so(api_client, path, key):
    user = UserFactory()
    own(user, BOUND + 3)
    headers = auth(user)
    with CaptureQueriesContext(connection) as captured:
        first = api_client.get(f"{path}?take=2", **headers)
    assert first.status_code == 200
    pagination = first.json()["pagination"]
    assert pagination["totalIsExact"] is False
    assert pagination["total"] >= BOUND + 1
    assert pagination["hasNextPage"] is True and pagination["nextCursor"]
    assert 'rel="next"' in first["Link"]
    # The COUNT stops after the bound: it reads at most BOUND + 1 rows, and never counts them all.
    counts = [query["sql"] for query in captured.captured_queries if "COUNT(" in query["sql"]]
    assert counts and all(f"LIMIT {BOUND + 1}" in sql for sql in counts), counts

    # A deep page knows at least the rows up to it; the last page ends the list whatever the estimate.
    last = api_client.get(f"{path}?take=2&page=4", **headers).json()
    assert len(last[key]) == 2
    assert last["pagination"]["hasNextPage"] is False and last["pagination"]["nextCursor"] is None
    assert (last["pagination"]["total"], last["pagination"]["totalIsExact"]) == (BOUND + 3, True)
    middle = api_client.get(f"{path}?take=2&page=3", **headers).json()["pagination"]
    assert middle["hasNextPage"] is True and middle["total"] >= 6 and middle["totalIsExact"] is False


def test_v2_bookings_follow_the_same_rule(api_client):
    user = UserFactory()
    headers = {**auth(user), "HTTP_CAL_API_VERSION": "2024-08-13"}
    own(user, BOUND)
    exact = api_client.get("/v2/bookings?take=2", **headers).json()["pagination"]
    assert (exact["totalItems"], exact["totalItemsIsExact"], exact["hasNextPage"]) == (BOUND, True, True)
    own(user, 3, first_day=20)
    estimated = api_client.get("/v2/bookings?take=2", **headers).json()["pagination"]
    assert estimated["totalItemsIsExact"] is False and estimated["totalItems"] >= BOUND + 1
    assert estimated["hasNextPage"] is True
    last = api_client.get("/v2/bookings?take=2&skip=6", **headers).json()["pagination"]
    assert (last["totalItems"], last["totalItemsIsExact"], last["hasNextPage"]) == (BOUND + 3, True, False)
