"""Staff inspect payments; they cannot add, change or delete them, only settle them."""

import pytest
from django.contrib.auth.models import Permission
from django.forms.models import model_to_dict
from django.urls import reverse

from accounts.tests.factories import PASSWORD, UserFactory
from core.tests.factories import AppFactory
from payments.admin import format_money
from payments.models import Payment, PaymentOption
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory

pytestmark = pytest.mark.django_db


def listed(client, **params) -> set:
    response = client.get(reverse("admin:payments_payment_changelist"), params)
    assert response.status_code == 200
    return set(response.context["cl"].result_list)


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [(5000, "usd", "50.00 USD"), (5, "eur", "0.05 EUR"), (1500, "jpy", "1,500 JPY"), (1234, "kwd", "1.234 KWD")],
)
def test_amounts_are_shown_in_major_units_with_their_currency(amount, currency, shown):
    assert format_money(amount, currency) == shown


def test_payment_list_shows_the_columns_staff_need(operator_client):
    payment = PaymentFactory(amount=5000, fee=175, currency="usd")

    content = operator_client.get(reverse("admin:payments_payment_changelist")).content.decode()

    for text in (payment.uid, payment.booking.uid, payment.booking.organizer.email, "50.00 USD", "1.75 USD", "Stripe"):
        assert text in content
    assert "ON_BOOKING" in content


def test_payment_list_filters_by_success_refunded_currency_option_app_and_date(operator_client):
    paid = PaymentFactory()
    pending = PaymentFactory(success=False, currency="eur", payment_option=PaymentOption.HOLD)
    refunded = PaymentFactory(refunded=True, app=AppFactory(slug="paypal", name="PayPal"))

    assert listed(operator_client, success__exact="0") == {pending}
    assert listed(operator_client, refunded__exact="1") == {refunded}
    assert listed(operator_client, currency="eur") == {pending}
    assert listed(operator_client, payment_option__exact="HOLD") == {pending}
    assert listed(operator_client, app__slug__exact="paypal") == {refunded}
    today = paid.created_at
    assert listed(
        operator_client, created_at__year=today.year, created_at__month=today.month, created_at__day=today.day
    ) == {paid, pending, refunded}


def test_payment_list_searches_uid_external_id_booking_uid_and_organizer_email(operator_client):
    organizer = UserFactory(email="organizer.search@example.org")
    target = PaymentFactory(uid="pay_target", external_id="pi_target_ext", booking=BookingFactory(organizer=organizer))
    PaymentFactory()

    for query in ("pay_target", "pi_target_ext", target.booking.uid, "organizer.search@example.org"):
        assert listed(operator_client, q=query) == {target}


def test_payments_cannot_be_added(operator_client):
    booking = BookingFactory()
    url = reverse("admin:payments_payment_add")

    assert operator_client.get(url).status_code == 403
    response = operator_client.post(url, {"uid": "pay_forged", "booking": booking.pk, "amount": 1, "currency": "usd"})

    assert response.status_code == 403
    assert not Payment.objects.exists()


def test_a_payment_change_page_is_read_only(operator_client):
    payment = PaymentFactory(amount=5000, success=False)
    url = reverse("admin:payments_payment_change", args=[payment.pk])
    before = model_to_dict(payment)

    page = operator_client.get(url)
    assert page.status_code == 200
    assert "50.00 USD" in page.content.decode()
    assert not page.context["adminform"].form.fields
    response = operator_client.post(url, {**before, "amount": 1, "success": "on", "refunded": "on"})

    assert response.status_code == 403
    payment.refresh_from_db()
    assert model_to_dict(payment) == before


def test_payments_cannot_be_deleted(operator_client):
    payment = PaymentFactory()

    single = operator_client.post(reverse("admin:payments_payment_delete", args=[payment.pk]), {"post": "yes"})
    bulk = operator_client.post(
        reverse("admin:payments_payment_changelist"),
        {"action": "delete_selected", "_selected_action": [payment.pk], "post": "yes"},
    )

    assert single.status_code == 403
    assert bulk.status_code == 302  # back to the list: there is no such action
    assert "delete_selected" not in operator_client.get(reverse("admin:payments_payment_changelist")).content.decode()
    assert Payment.objects.filter(pk=payment.pk).exists()


def test_mark_paid_action_settles_pending_payments(operator_client):
    pending, other = PaymentFactory(success=False), PaymentFactory(success=False)

    response = operator_client.post(
        reverse("admin:payments_payment_changelist"), {"action": "mark_paid", "_selected_action": [pending.pk]}
    )

    assert response.status_code == 302
    pending.refresh_from_db()
    other.refresh_from_db()
    assert (pending.success, other.success) == (True, False)


def test_mark_refunded_action_refunds_paid_payments_and_refuses_unpaid_ones(operator_client):
    paid, unpaid = PaymentFactory(success=True), PaymentFactory(success=False)

    response = operator_client.post(
        reverse("admin:payments_payment_changelist"),
        {"action": "mark_refunded", "_selected_action": [paid.pk, unpaid.pk]},
        follow=True,
    )

    paid.refresh_from_db()
    unpaid.refresh_from_db()
    assert (paid.refunded, unpaid.refunded, unpaid.success) == (True, False, False)
    shown = [str(message) for message in response.context["messages"]]
    assert any(f"{unpaid.uid} was never paid" in message for message in shown)


def test_staff_without_the_change_permission_cannot_settle_payments(client):
    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_payment"))
    assert client.login(username=viewer.username, password=PASSWORD)
    pending = PaymentFactory(success=False)

    page = client.get(reverse("admin:payments_payment_changelist"))
    client.post(reverse("admin:payments_payment_changelist"), {"action": "mark_paid", "_selected_action": [pending.pk]})

    assert page.status_code == 200
    assert "mark_paid" not in page.content.decode()
    pending.refresh_from_db()
    assert pending.success is False
