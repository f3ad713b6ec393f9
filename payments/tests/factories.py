import factory

from core.tests.factories import AppFactory
from payments.models import Payment, PaymentOption
from scheduling.tests.factories import BookingFactory


class PaymentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Payment

    uid = factory.Sequence(lambda n: f"pay_{n:08d}")
    app = factory.SubFactory(AppFactory)
    booking = factory.SubFactory(BookingFactory)
    organizer = factory.LazyAttribute(lambda payment: payment.booking.organizer)
    amount = 5000
    fee = 175
    currency = "usd"
    success = True
    refunded = False
    external_id = factory.Sequence(lambda n: f"pi_{n:010d}")
    payment_option = PaymentOption.ON_BOOKING
