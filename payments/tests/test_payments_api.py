"""Payments over HTTP (docs/api.md, Payments): read-only, the organizer's only."""

import orjson
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory
from payments.models import Payment
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


def snapshot():
    return list(Payment.objects.order_by("id").values_list("id", "amount", "success", "refunded", "booking_id"))


def test_list_shows_payments_of_my_bookings_only(api_client, organizer, key):
    mine = PaymentFactory(booking=BookingFactory(organizer=organizer))
    PaymentFactory()
    response = api_client.get("/v1/payments", **bearer(key))
    assert response.status_code == 200
    body = response.json()
    assert [payment["id"] for payment in body["payments"]] == [mine.pk]
    assert body["pagination"]["total"] == 1
    payment = body["payments"][0]
    assert payment == {
        "id": mine.pk,
        "uid": mine.uid,
        "appId": "stripe",
        "app": {"slug": "stripe", "name": "Stripe"},
        "bookingId": mine.booking_id,
        "booking": {
            "id": mine.booking_id,
            "uid": mine.booking.uid,
            "title": mine.booking.title,
            "startTime": mine.booking.start_time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "endTime": mine.booking.end_time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "status": "ACCEPTED",
        },
        "amount": 5000,
        "fee": 175,
        "currency": "usd",
        "success": True,
        "refunded": False,
        "data": {},
        "externalId": mine.external_id,
        "paymentOption": "ON_BOOKING",
    }


def test_get_one_with_an_oauth_token(api_client, organizer):
    payment = PaymentFactory(booking=BookingFactory(organizer=organizer))
    token = AccessTokenFactory(user=organizer, scope="READ_PAYMENT")
    response = api_client.get(f"/payments/{payment.pk}", **bearer(token.raw_token))
    assert response.status_code == 200
    assert response.json()["payment"]["uid"] == payment.uid
    assert api_client.get("/v1/payments", **bearer(token.raw_token)).status_code == 200


def test_someone_elses_payment_is_404(api_client, key):
    payment = PaymentFactory()
    response = api_client.get(f"/v1/payments/{payment.pk}", **bearer(key))
    assert response.status_code == 404
    assert payment.uid not in response.content.decode()


def test_filters_booking_success_refunded(api_client, organizer, key):
    booking = BookingFactory(organizer=organizer)
    paid = PaymentFactory(booking=booking)
    refunded = PaymentFactory(booking=booking, refunded=True)
    pending = PaymentFactory(booking=BookingFactory(organizer=organizer), success=False)

    def ids(query):
        response = api_client.get(f"/v1/payments?{query}", **bearer(key))
        assert response.status_code == 200, response.json()
        return [payment["id"] for payment in response.json()["payments"]]

    assert ids(f"bookingId={booking.pk}") == [paid.pk, refunded.pk]
    assert ids("success=false") == [pending.pk]
    assert ids("success=true&refunded=true") == [refunded.pk]
    assert ids("refunded=false") == [paid.pk, pending.pk]


@pytest.mark.parametrize(
    "query,field", [("bookingId=x", "bookingId"), ("success=maybe", "success"), ("refunded=2", "refunded")]
)
def test_bad_filter_is_400_naming_it(api_client, key, query, field):
    response = api_client.get(f"/v1/payments?{query}", **bearer(key))
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_system_admin_sees_all_and_filters_by_organizer(api_client):
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN")).raw_key
    first, second = PaymentFactory(), PaymentFactory()
    response = api_client.get("/v1/payments", **bearer(admin_key))
    assert {payment["id"] for payment in response.json()["payments"]} == {first.pk, second.pk}
    response = api_client.get(f"/v1/payments?userId={second.booking.organizer_id}", **bearer(admin_key))
    assert [payment["id"] for payment in response.json()["payments"]] == [second.pk]


def test_non_admin_user_id_filter_for_someone_else_is_403(api_client, key):
    other = PaymentFactory()
    assert api_client.get(f"/v1/payments?userId={other.booking.organizer_id}", **bearer(key)).status_code == 403


@pytest.mark.parametrize(
    "method,path",
    [
        ("post", "/v1/payments"),
        ("patch", "/v1/payments/{id}"),
        ("delete", "/v1/payments/{id}"),
        ("put", "/v1/payments/{id}"),
    ],
)
def test_payments_cannot_be_written(api_client, organizer, key, method, path):
    payment = PaymentFactory(booking=BookingFactory(organizer=organizer))
    before = snapshot()
    response = getattr(api_client, method)(path.format(id=payment.pk), {"amount": 1}, format="json", **bearer(key))
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
    assert snapshot() == before


def _payment_list_queries(api_client, organizer, key, count):
    for _ in range(count):
        PaymentFactory(booking=BookingFactory(organizer=organizer))
    with CaptureQueriesContext(connection) as context:
        response = api_client.get("/v1/payments?take=500", **bearer(key))
    assert len(response.json()["payments"]) == Payment.objects.count()
    return len(context.captured_queries)


def test_payment_list_query_count_is_constant(api_client, organizer, key):
    api_client.get("/v1/payments", **bearer(key))
    # credential, payments with their rows (a list that ends on its page needs no COUNT)
    assert _payment_list_queries(api_client, organizer, key, 1) == 2
    assert _payment_list_queries(api_client, organizer, key, 49) == 2
    payment = Payment.objects.last()
    with CaptureQueriesContext(connection) as context:
        assert api_client.get(f"/v1/payments/{payment.pk}", **bearer(key)).json()["payment"]["uid"] == payment.uid
    assert len(context.captured_queries) == 2


def test_rows_write_what_model_instances_write_in_the_list_and_alone(api_client, organizer, key):
    """Payments are read as rows (core.fastpath), never as model instances: the bodies must be
    what `PaymentSerializer` writes for the models, with and without an app."""
    from core.fastpath import read_rows
    from core.renderers import ORJSONRenderer
    from payments.selectors import payment_list
    from payments.serializers import PaymentSerializer

    booking = BookingFactory(organizer=organizer, title="Café ☕", status="CANCELLED")
    PaymentFactory(booking=booking, data={"charge": "ch_1", "nested": [1, None, {"x": "ÿ"}]}, refunded=True)
    PaymentFactory(booking=booking, app=None, success=False, payment_option="HOLD", external_id="")
    PaymentFactory(booking=BookingFactory(organizer=organizer), fee=0, currency="eur")
    PaymentFactory()  # someone else's
    models = Payment.objects.filter(booking__organizer=organizer).select_related("app", "booking").order_by("id")

    expected = orjson.loads(ORJSONRenderer().render(PaymentSerializer(models, many=True).data))
    rows = list(read_rows(payment_list(user=organizer), PaymentSerializer))
    assert orjson.loads(ORJSONRenderer().render(PaymentSerializer(rows, many=True).data)) == expected
    assert api_client.get("/v1/payments", **bearer(key)).json()["payments"] == expected
    for payment in expected:
        assert api_client.get(f"/v1/payments/{payment['id']}", **bearer(key)).json()["payment"] == payment
    assert [payment["app"] for payment in expected] == [{"slug": "stripe", "name": "Stripe"}, None, expected[0]["app"]]


@pytest.mark.parametrize("path", ["/v1/payments", "/v1/payments/{id}"])
def test_payments_need_read_payment_and_credentials(api_client, organizer, path):
    payment = PaymentFactory(booking=BookingFactory(organizer=organizer))
    token = AccessTokenFactory(user=organizer, scope="READ_BOOKING")
    url = path.format(id=payment.pk)
    response = api_client.get(url, **bearer(token.raw_token))
    assert response.status_code == 403
    assert response["WWW-Authenticate"].endswith('scope="READ_PAYMENT"')
    response = api_client.get(url)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
