"""Every back-office page renders for an operator, and no changelist's query count grows with rows."""

import hashlib
import itertools
from datetime import timedelta

import factory
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import Grant, IDToken

from accounts.models import OAuthCodeRedemption
from accounts.tests.factories import (
    AccessTokenFactory,
    ApiKeyFactory,
    ApplicationFactory,
    MembershipFactory,
    RefreshTokenFactory,
    TeamFactory,
    UserFactory,
)
from core.tests.factories import AppFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db


class GrantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Grant

    user = factory.SubFactory(UserFactory)
    application = factory.SubFactory(ApplicationFactory)
    code = factory.Sequence(lambda n: f"authorization-code-{n:04d}-abcdefghijkl")
    expires = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=10))
    redirect_uri = "http://127.0.0.1:8765/callback"
    scope = "READ_PROFILE"


class IDTokenFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = IDToken

    user = factory.SubFactory(UserFactory)
    application = factory.SubFactory(ApplicationFactory)
    expires = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=10))
    scope = "openid"


_app_numbers = itertools.count()


def another_app():
    number = next(_app_numbers)
    return AppFactory(slug=f"app-{number}", name=f"App {number}")


class OAuthCodeRedemptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = OAuthCodeRedemption

    application = factory.SubFactory(ApplicationFactory)
    user = factory.SubFactory(UserFactory)
    code_checksum = factory.Sequence(lambda n: hashlib.sha256(f"code-{n}".encode()).hexdigest())
    scope = "READ_PROFILE"


def team_with_members():
    team = TeamFactory()
    MembershipFactory(team=team, role="OWNER")
    MembershipFactory(team=team)
    return team


# (admin URL prefix, factory making one representative row, whether the admin allows adding)
PAGES = {
    "accounts_user": (UserFactory, True),
    "accounts_team": (team_with_members, True),
    "accounts_membership": (MembershipFactory, True),
    "accounts_apikey": (ApiKeyFactory, True),
    "oauth2_provider_application": (ApplicationFactory, True),
    "oauth2_provider_accesstoken": (AccessTokenFactory, False),
    "oauth2_provider_refreshtoken": (RefreshTokenFactory, False),
    "oauth2_provider_grant": (GrantFactory, False),
    "oauth2_provider_idtoken": (IDTokenFactory, False),
    "accounts_oauthcoderedemption": (OAuthCodeRedemptionFactory, False),
    "core_app": (another_app, True),
    "scheduling_schedule": (ScheduleFactory, True),
    "scheduling_eventtype": (EventTypeFactory, True),
    "scheduling_booking": (BookingFactory, False),
    "payments_payment": (PaymentFactory, False),
}


def make_row(prefix):
    return PAGES[prefix][0]()


@pytest.mark.parametrize("prefix", PAGES)
def test_changelist_add_and_change_pages_render_for_an_operator(operator_client, prefix):
    row = make_row(prefix)
    changelist = operator_client.get(reverse(f"admin:{prefix}_changelist"))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count >= 1

    change = operator_client.get(reverse(f"admin:{prefix}_change", args=[row.pk]))
    assert change.status_code == 200
    assert change.context["original"] == row

    add = operator_client.get(reverse(f"admin:{prefix}_add"))
    assert add.status_code == (200 if PAGES[prefix][1] else 403)


def test_admin_index_lists_every_back_office_model(operator_client):
    response = operator_client.get(reverse("admin:index"))
    assert response.status_code == 200
    for prefix in PAGES:
        assert reverse(f"admin:{prefix}_changelist") in response.content.decode()


@pytest.mark.parametrize("prefix", PAGES)
def test_changelist_query_count_does_not_grow_with_rows(operator_client, prefix):
    url = reverse(f"admin:{prefix}_changelist")
    make_row(prefix)
    operator_client.get(url)  # warm caches (content types, sessions) so both runs are alike
    with CaptureQueriesContext(connection) as one_row:
        assert operator_client.get(url).status_code == 200
    for _ in range(19):
        make_row(prefix)
    with CaptureQueriesContext(connection) as twenty_rows:
        response = operator_client.get(url)
    assert response.status_code == 200
    assert response.context["cl"].result_count >= 20
    assert len(twenty_rows) == len(one_row), "\n".join(query["sql"] for query in twenty_rows.captured_queries)
