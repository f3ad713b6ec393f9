"""Staff edit memberships without the API's role rules, but a team never loses its last accepted OWNER."""

import pytest
from django.urls import reverse

from accounts.models import Membership, MembershipRole
from accounts.tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def membership_form(membership, **changes):
    data = {
        "user": membership.user_id,
        "team": membership.team_id,
        "role": membership.role,
        "accepted": "on" if membership.accepted else "",
        "disable_impersonation": "",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value != ""}


def test_demoting_the_last_owner_on_the_membership_page_is_refused(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)

    response = operator_client.post(
        reverse("admin:accounts_membership_change", args=[owner.pk]), membership_form(owner, role="ADMIN")
    )

    assert response.status_code == 200
    assert "must keep at least one accepted owner" in str(response.context["adminform"].form.errors)
    owner.refresh_from_db()
    assert owner.role == MembershipRole.OWNER


def test_un_accepting_the_last_owner_is_refused(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)

    response = operator_client.post(
        reverse("admin:accounts_membership_change", args=[owner.pk]), membership_form(owner, accepted="")
    )

    assert response.status_code == 200
    owner.refresh_from_db()
    assert owner.accepted is True


def test_demoting_one_of_two_owners_is_allowed(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    MembershipFactory(team=owner.team, role=MembershipRole.OWNER)

    response = operator_client.post(
        reverse("admin:accounts_membership_change", args=[owner.pk]), membership_form(owner, role="MEMBER")
    )

    assert response.status_code == 302
    owner.refresh_from_db()
    assert owner.role == MembershipRole.MEMBER


def test_deleting_the_last_owner_is_refused_on_the_confirmation_page(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    url = reverse("admin:accounts_membership_delete", args=[owner.pk])

    page = operator_client.get(url)
    confirmed = operator_client.post(url, {"post": "yes"})

    assert "must keep at least one accepted owner" in page.content.decode()
    assert confirmed.status_code == 200
    assert Membership.objects.filter(pk=owner.pk).exists()


def test_bulk_deleting_every_owner_of_a_team_is_refused(operator_client):
    first = MembershipFactory(role=MembershipRole.OWNER)
    second = MembershipFactory(team=first.team, role=MembershipRole.OWNER)

    operator_client.post(
        reverse("admin:accounts_membership_changelist"),
        {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
    )

    assert Membership.objects.filter(pk__in=[first.pk, second.pk]).count() == 2


def test_removing_the_last_owner_inline_on_the_team_page_is_refused(operator_client):
    owner = MembershipFactory(role=MembershipRole.OWNER)
    member = MembershipFactory(team=owner.team, role=MembershipRole.MEMBER)
    team = owner.team
    prefix = "memberships"
    data = {
        "name": team.name,
        "slug": team.slug,
        f"{prefix}-TOTAL_FORMS": "2",
        f"{prefix}-INITIAL_FORMS": "2",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
    for index, membership in enumerate([owner, member]):
        data.update(
            {
                f"{prefix}-{index}-id": membership.pk,
                f"{prefix}-{index}-team": team.pk,
                f"{prefix}-{index}-user": membership.user_id,
                f"{prefix}-{index}-role": membership.role,
                f"{prefix}-{index}-accepted": "on",
            }
        )
    data[f"{prefix}-0-DELETE"] = "on"

    response = operator_client.post(reverse("admin:accounts_team_change", args=[team.pk]), data)

    assert response.status_code == 200
    assert "must keep at least one accepted owner" in response.content.decode()
    assert Membership.objects.filter(pk=owner.pk).exists()

    # Making the member an owner in the same save is fine.
    data[f"{prefix}-1-role"] = "OWNER"
    response = operator_client.post(reverse("admin:accounts_team_change", args=[team.pk]), data)
    assert response.status_code == 302
    assert not Membership.objects.filter(pk=owner.pk).exists()
    member.refresh_from_db()
    assert member.role == MembershipRole.OWNER
