"""The database itself refuses payments that break the model's rules."""

import pytest

from payments.models import Payment
from payments.tests.factories import PaymentFactory
from tests.support.database import refused_by

pytestmark = pytest.mark.django_db


def test_a_payment_can_only_be_refunded_once_it_succeeded():
    with refused_by("payment_refund_needs_success"):
        PaymentFactory(success=False, refunded=True)

    assert not Payment.objects.exists()


def test_an_existing_unpaid_payment_cannot_be_flagged_refunded():
    payment = PaymentFactory(success=False)

    with refused_by("payment_refund_needs_success"):
        Payment.objects.filter(pk=payment.pk).update(refunded=True)

    payment.refresh_from_db()
    assert payment.refunded is False


@pytest.mark.parametrize(
    ("field", "value", "constraint"),
    [
        ("currency", "USD", "payment_currency_iso"),
        ("currency", "us1", "payment_currency_iso"),
        ("payment_option", "LATER", "payment_option_valid"),
        ("amount", -100, "payments_payment_amount_check"),
        ("fee", -1, "payments_payment_fee_check"),
    ],
)
def test_a_payment_with_an_out_of_range_value_is_refused(field, value, constraint):
    payment = PaymentFactory()

    with refused_by(constraint):
        Payment.objects.filter(pk=payment.pk).update(**{field: value})


def test_two_payments_cannot_share_a_uid():
    PaymentFactory(uid="pay_1")

    with refused_by("payments_payment_uid_key"):
        PaymentFactory(uid="pay_1")
