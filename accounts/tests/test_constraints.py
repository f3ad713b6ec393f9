"""The database itself refuses rows that break the accounts models' rules."""

import hashlib

import factory
import pytest

from accounts.models import ApiKey, Membership, OAuthCodeRedemption, User
from accounts.tests.factories import (
    ApiKeyFactory,
    ApplicationFactory,
    MembershipFactory,
    OAuthClientProfileFactory,
    TeamFactory,
    UserFactory,
)
from tests.support.database import refused_by

pytestmark = pytest.mark.django_db


class OAuthCodeRedemptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = OAuthCodeRedemption

    application = factory.SubFactory(ApplicationFactory)
    user = factory.SubFactory(UserFactory)
    code_checksum = factory.Sequence(lambda n: hashlib.sha256(f"code-{n}".encode()).hexdigest())


def test_two_users_cannot_share_an_email_address_in_any_case():
    UserFactory(email="ada@example.com")

    with refused_by("user_email_ci_unique"):
        UserFactory(email="ADA@Example.com")

    assert User.objects.filter(email__iexact="ada@example.com").count() == 1


def test_two_users_cannot_share_a_username():
    UserFactory(username="ada")

    with refused_by("accounts_user_username_key"):
        UserFactory(username="ada", email="other@example.com")


@pytest.mark.parametrize(
    ("field", "value", "constraint"),
    [
        ("role", "ROOT", "user_role_valid"),
        ("week_start", "Funday", "user_week_start_valid"),
        ("time_format", 13, "user_time_format_valid"),
        ("end_time", 1441, "user_end_time_within_day"),
        ("end_time", -1, "accounts_user_end_time_check"),
        ("buffer_time", -5, "accounts_user_buffer_time_check"),
    ],
)
def test_a_user_with_an_out_of_range_value_is_refused(field, value, constraint):
    user = UserFactory()

    with refused_by(constraint):
        User.objects.filter(pk=user.pk).update(**{field: value})

    user.refresh_from_db()
    assert getattr(user, field) != value


def test_two_teams_cannot_share_a_slug():
    TeamFactory(slug="acme")

    with refused_by("accounts_team_slug_key"):
        TeamFactory(slug="acme")


def test_a_user_is_a_member_of_a_team_only_once():
    membership = MembershipFactory()

    with refused_by("membership_user_team_unique"):
        MembershipFactory(user=membership.user, team=membership.team, role="ADMIN")

    assert Membership.objects.filter(user=membership.user, team=membership.team).count() == 1


def test_a_membership_role_outside_the_contract_is_refused():
    membership = MembershipFactory()

    with refused_by("membership_role_valid"):
        Membership.objects.filter(pk=membership.pk).update(role="GUEST")


def test_two_api_keys_cannot_have_the_same_hash():
    first, second = ApiKeyFactory(), ApiKeyFactory()

    with refused_by("accounts_apikey_hashed_key_key"):
        ApiKey.objects.filter(pk=second.pk).update(hashed_key=first.hashed_key)


def test_an_oauth_client_has_at_most_one_profile():
    application = ApplicationFactory()

    with refused_by("accounts_oauthclientprofile_application_id_key"):
        OAuthClientProfileFactory(application=application)


def test_an_authorization_code_is_redeemed_only_once():
    redemption = OAuthCodeRedemptionFactory()

    with refused_by("accounts_oauthcoderedemption_code_checksum_key"):
        OAuthCodeRedemptionFactory(code_checksum=redemption.code_checksum)
