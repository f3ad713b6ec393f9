"""The admin writes users, teams and memberships through the API's services, so the same rules
hold: a team starts with an accepted OWNER, keeps one, and has a slug of its own."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from accounts.models import Membership, MembershipRole, Team
from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory

pytestmark = pytest.mark.django_db


def team_add_form(**overrides) -> dict:
    data = {"name": "Analytical Engines", "slug": "analytical-engines", "bio": "", "logo": ""}
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def test_adding_a_team_makes_the_named_user_its_accepted_owner(operator_client):
    owner = UserFactory()

    response = operator_client.post(reverse("admin:accounts_team_add"), team_add_form(owner=owner.pk))

    assert response.status_code == 302
    team = Team.objects.get(slug="analytical-engines")
    membership = Membership.objects.get(team=team)
    assert (membership.user, membership.role, membership.accepted) == (owner, MembershipRole.OWNER, True)


def test_adding_a_team_without_an_owner_is_refused(operator_client):
    response = operator_client.post(reverse("admin:accounts_team_add"), team_add_form())

    assert response.status_code == 200
    assert "owner" in response.context["adminform"].form.errors
    assert not Team.objects.exists()
    assert not Membership.objects.exists()


def test_adding_a_team_with_a_taken_slug_is_refused(operator_client):
    TeamFactory(slug="analytical-engines")

    response = operator_client.post(reverse("admin:accounts_team_add"), team_add_form(owner=UserFactory().pk))

    assert response.status_code == 200
    assert "slug" in response.context["adminform"].form.errors
    assert Team.objects.count() == 1
    assert not Membership.objects.exists()


def test_the_team_add_page_asks_for_the_owner(operator_client):
    page = operator_client.get(reverse("admin:accounts_team_add"))

    assert page.status_code == 200
    assert "owner" in page.context["adminform"].form.fields


def inline_data(team, memberships) -> dict:
    prefix = "memberships"
    data = {
        "name": team.name,
        "slug": team.slug,
        f"{prefix}-TOTAL_FORMS": str(len(memberships)),
        f"{prefix}-INITIAL_FORMS": str(len(memberships)),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
    for index, membership in enumerate(memberships):
        data.update(
            {
                f"{prefix}-{index}-id": membership.pk,
                f"{prefix}-{index}-team": team.pk,
                f"{prefix}-{index}-user": membership.user_id,
                f"{prefix}-{index}-role": membership.role,
                f"{prefix}-{index}-accepted": "on" if membership.accepted else "",
            }
        )
    return {key: value for key, value in data.items() if value != ""}


def test_demoting_the_last_owner_inline_on_the_team_page_is_refused(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    member = MembershipFactory(team=owner.team, role=MembershipRole.MEMBER)
    data = inline_data(owner.team, [owner, member])
    data["memberships-0-role"] = "ADMIN"

    response = operator_client.post(reverse("admin:accounts_team_change", args=[owner.team.pk]), data)

    assert response.status_code == 200
    assert "must keep at least one accepted owner" in response.content.decode()
    owner.refresh_from_db()
    assert owner.role == MembershipRole.OWNER


def test_handing_ownership_over_inline_on_the_team_page_is_allowed(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    member = MembershipFactory(team=owner.team, role=MembershipRole.MEMBER)
    data = inline_data(owner.team, [owner, member])
    data["memberships-0-role"] = "MEMBER"
    data["memberships-1-role"] = "OWNER"

    response = operator_client.post(reverse("admin:accounts_team_change", args=[owner.team.pk]), data)

    assert response.status_code == 302
    owner.refresh_from_db()
    member.refresh_from_db()
    assert (owner.role, member.role) == (MembershipRole.MEMBER, MembershipRole.OWNER)


def test_changing_a_team_slug_to_a_taken_one_is_refused(operator_client):
    TeamFactory(slug="taken")
    owner = MembershipFactory(role=MembershipRole.OWNER)
    data = inline_data(owner.team, [owner])
    data["slug"] = "taken"

    response = operator_client.post(reverse("admin:accounts_team_change", args=[owner.team.pk]), data)

    assert response.status_code == 200
    assert "slug" in response.context["adminform"].form.errors
    owner.team.refresh_from_db()
    assert owner.team.slug != "taken"


def test_adding_a_membership_in_the_admin_sets_what_the_operator_chose(operator_client):
    team, user = TeamFactory(), UserFactory()

    response = operator_client.post(
        reverse("admin:accounts_membership_add"),
        {"user": user.pk, "team": team.pk, "role": "ADMIN", "accepted": "on"},
    )

    assert response.status_code == 302
    membership = Membership.objects.get(user=user, team=team)
    assert (membership.role, membership.accepted) == (MembershipRole.ADMIN, True)


def test_a_membership_does_not_change_hands_in_the_admin(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    MembershipFactory(team=owner.team, role=MembershipRole.OWNER)
    other_team, other_user = TeamFactory(), UserFactory()

    response = operator_client.post(
        reverse("admin:accounts_membership_change", args=[owner.pk]),
        {"user": other_user.pk, "team": other_team.pk, "role": "OWNER", "accepted": "on"},
    )

    assert response.status_code == 302
    owner.refresh_from_db()
    assert owner.user_id != other_user.pk
    assert owner.team_id != other_team.pk


def test_deleting_a_team_in_the_admin_removes_its_memberships(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)

    response = operator_client.post(reverse("admin:accounts_team_delete", args=[owner.team.pk]), {"post": "yes"})

    assert response.status_code == 302
    assert not Team.objects.filter(pk=owner.team.pk).exists()
    assert not Membership.objects.filter(pk=owner.pk).exists()


def test_changing_a_users_email_to_one_taken_in_other_case_is_refused(operator_client):
    UserFactory(email="ada@example.com")
    user = UserFactory(email="grace@example.com")
    page = operator_client.get(reverse("admin:accounts_user_change", args=[user.pk]))
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data.update(email="ADA@example.com", groups=[], user_permissions=[])

    response = operator_client.post(reverse("admin:accounts_user_change", args=[user.pk]), data)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    user.refresh_from_db()
    assert user.email == "grace@example.com"


def test_a_refused_service_write_shows_as_a_message_and_writes_nothing(operator_client, monkeypatch):
    """A rule only the service knows (here: a team keeps an accepted OWNER, checked again under the
    team's lock) comes back to the operator as an error message, never a server error."""
    from accounts.admin import teams as accounts_admin

    owner = MembershipFactory(role=MembershipRole.OWNER)
    member = MembershipFactory(team=owner.team, role=MembershipRole.MEMBER)
    # The form's own check is bypassed, as if a concurrent edit had slipped past it.
    monkeypatch.setattr(accounts_admin, "membership_owner_loss", lambda **kwargs: None)
    data = inline_data(owner.team, [owner, member])
    data["memberships-0-DELETE"] = "on"
    url = reverse("admin:accounts_team_change", args=[owner.team.pk])

    response = operator_client.post(url, data)

    assert response.status_code == 302
    assert response["Location"] == url
    assert "last accepted owner cannot be removed" in " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert Membership.objects.filter(pk=owner.pk).exists()
    member.refresh_from_db()
    assert member.role == MembershipRole.MEMBER
