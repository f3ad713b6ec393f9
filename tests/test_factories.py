import pytest

from accounts.authentication import hash_api_key
from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, MembershipFactory
from payments.tests.factories import PaymentFactory
from webhooks.tests.factories import WebhookScheduledTriggerFactory

pytestmark = pytest.mark.django_db


def test_factories_build_a_consistent_graph():
    payment = PaymentFactory()
    assert payment.booking.event_type.owner == payment.booking.organizer
    assert payment.booking.attendees.count() == 1
    assert payment.booking.event_type.schedule.availability.get().days == [1, 2, 3, 4, 5]
    trigger = WebhookScheduledTriggerFactory()
    assert trigger.booking.organizer == trigger.webhook.user
    assert MembershipFactory().team.memberships.count() == 1


def test_api_key_factory_keeps_only_the_hash():
    api_key = ApiKeyFactory()
    assert api_key.raw_key.startswith("sk_live_")
    assert api_key.hashed_key == hash_api_key(api_key.raw_key)
    assert api_key.raw_key not in (api_key.prefix, api_key.hashed_key)


def test_access_token_factory_token_is_usable():
    token = AccessTokenFactory(scope="READ_PROFILE READ_BOOKING")
    assert token.application.profile.suspended is False
    assert token.raw_token


def test_client_secret_is_stored_with_the_fast_hasher():
    from django.contrib.auth.hashers import check_password

    from accounts.tests.factories import ApplicationFactory

    application = ApplicationFactory()
    assert application.client_secret.startswith("secret_sha256$")
    assert check_password(application.raw_client_secret, application.client_secret)
    assert not check_password("wrong", application.client_secret)
