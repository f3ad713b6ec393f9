"""Back office for users, teams, memberships and API keys."""

import pytest
from django.urls import reverse
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from accounts.authentication import CredentialAuthentication, hash_api_key
from accounts.models import ApiKey, Membership, MembershipRole, User
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from core.exceptions import InvalidToken

pytestmark = pytest.mark.django_db


def authenticate_with(raw_key: str):
    request = Request(APIRequestFactory().get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {raw_key}"))
    return CredentialAuthentication().authenticate(request)


# --- API keys --------------------------------------------------------------------------------


def test_creating_an_api_key_shows_it_once_and_stores_only_its_hash(operator_client):
    owner = UserFactory()

    response = operator_client.post(
        reverse("admin:accounts_apikey_add"), {"user": owner.pk, "note": "CI export", "expires_at": ""}, follow=True
    )

    assert response.status_code == 200
    values = {label: value for label, value, _ in response.context["values"]}
    raw_key = values["API key"]
    assert raw_key.startswith("sk_live_")
    api_key = ApiKey.objects.get()
    assert (api_key.user, api_key.note) == (owner, "CI export")
    assert api_key.hashed_key == hash_api_key(raw_key)
    assert raw_key not in (api_key.prefix, api_key.hashed_key)
    assert authenticate_with(raw_key)[0] == owner

    again = operator_client.get(response.request["PATH_INFO"])
    assert raw_key not in again.content.decode()
    change_page = operator_client.get(reverse("admin:accounts_apikey_change", args=[api_key.pk]))
    assert change_page.status_code == 200
    assert raw_key not in change_page.content.decode()
    assert api_key.hashed_key not in change_page.content.decode()


def test_an_issued_api_key_cannot_be_edited(operator_client):
    api_key = ApiKeyFactory(note="original")

    response = operator_client.post(
        reverse("admin:accounts_apikey_change", args=[api_key.pk]), {"user": api_key.user.pk, "note": "changed"}
    )

    assert response.status_code == 403
    api_key.refresh_from_db()
    assert api_key.note == "original"


def test_revoke_action_stops_the_key_at_once(operator_client):
    api_key, other = ApiKeyFactory(), ApiKeyFactory()

    response = operator_client.post(
        reverse("admin:accounts_apikey_changelist"), {"action": "revoke_keys", "_selected_action": [api_key.pk]}
    )

    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.revoked_at is not None
    with pytest.raises(InvalidToken):
        authenticate_with(api_key.raw_key)
    assert authenticate_with(other.raw_key)[0] == other.user


def test_api_key_list_shows_prefix_note_and_owner_but_no_hash(operator_client):
    api_key = ApiKeyFactory(note="nightly sync")

    content = operator_client.get(reverse("admin:accounts_apikey_changelist")).content.decode()

    assert f"{api_key.prefix}…" in content
    assert "nightly sync" in content
    assert api_key.user.username in content
    assert api_key.hashed_key not in content


# --- Users -----------------------------------------------------------------------------------


def test_operator_adds_a_user_with_an_email_address(operator_client):
    response = operator_client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": "grace",
            "email": "grace@example.com",
            "name": "Grace Hopper",
            "password1": "a long enough passphrase 42",
            "password2": "a long enough passphrase 42",
            "usable_password": "true",
        },
    )

    assert response.status_code == 302
    user = User.objects.get(username="grace")
    assert (user.email, user.name) == ("grace@example.com", "Grace Hopper")
    assert user.check_password("a long enough passphrase 42")


def test_a_second_user_with_the_same_email_in_other_case_is_refused(operator_client):
    UserFactory(email="ada@example.com")

    response = operator_client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": "ada2",
            "email": "ADA@example.com",
            "password1": "a long enough passphrase 42",
            "password2": "a long enough passphrase 42",
            "usable_password": "true",
        },
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert not User.objects.filter(username="ada2").exists()


def test_user_change_page_edits_profile_fields(operator_client):
    user = UserFactory()
    page = operator_client.get(reverse("admin:accounts_user_change", args=[user.pk]))
    form = page.context["adminform"].form
    for field in ("time_zone", "week_start", "time_format", "brand_color", "role", "default_schedule"):
        assert field in form.fields


def test_an_invalid_time_zone_is_refused_on_the_user_page(operator_client):
    user = UserFactory(time_zone="Europe/Berlin")
    page = operator_client.get(reverse("admin:accounts_user_change", args=[user.pk]))
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data.update(time_zone="Mars/Olympus_Mons", groups=[], user_permissions=[])

    response = operator_client.post(reverse("admin:accounts_user_change", args=[user.pk]), data)

    assert response.status_code == 200
    assert "Mars/Olympus_Mons" in str(response.context["adminform"].form.errors["time_zone"])
    user.refresh_from_db()
    assert user.time_zone == "Europe/Berlin"


# --- Teams and memberships -------------------------------------------------------------------


def test_team_page_shows_its_memberships_inline(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    member = MembershipFactory(team=owner.team, accepted=False)

    response = operator_client.get(reverse("admin:accounts_team_change", args=[owner.team.pk]))

    inline = response.context["inline_admin_formsets"][0]
    assert inline.formset.model is Membership
    assert {form.instance.pk for form in inline.formset.forms if form.instance.pk} == {owner.pk, member.pk}


def test_membership_list_filters_by_role_accepted_and_team(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    invited = MembershipFactory(team=owner.team, accepted=False)
    elsewhere = MembershipFactory()
    url = reverse("admin:accounts_membership_changelist")

    def listed(**params):
        return set(operator_client.get(url, params).context["cl"].result_list)

    assert listed(role__exact="OWNER") == {owner}
    assert listed(accepted__exact="0") == {invited}
    assert listed(team__id__exact=owner.team.pk) == {owner, invited}
    assert listed() == {owner, invited, elsewhere}


def test_membership_list_searches_user_email_and_team_name(operator_client):
    target = MembershipFactory(user=UserFactory(email="lovelace@example.org"), team=TeamFactory(name="Analytical"))
    MembershipFactory()
    url = reverse("admin:accounts_membership_changelist")

    assert list(operator_client.get(url, {"q": "lovelace@"}).context["cl"].result_list) == [target]
    assert list(operator_client.get(url, {"q": "analytical"}).context["cl"].result_list) == [target]


def test_a_duplicate_membership_is_refused_with_a_form_error(operator_client):
    membership = MembershipFactory()

    response = operator_client.post(
        reverse("admin:accounts_membership_add"),
        {"user": membership.user.pk, "team": membership.team.pk, "role": "MEMBER"},
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert Membership.objects.count() == 1
