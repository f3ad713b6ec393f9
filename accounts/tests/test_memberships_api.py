"""Memberships over HTTP, and every role rule of docs/api.md, "Teams and memberships"."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Membership
from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


def snapshot():
    return list(
        Membership.objects.order_by("id").values_list(
            "id", "user_id", "team_id", "role", "accepted", "disable_impersonation"
        )
    )


@pytest.fixture
def team():
    return TeamFactory()


def join(team, role="MEMBER", accepted=True, **kwargs):
    """A membership of `team` and an API key of its user."""
    membership = MembershipFactory(team=team, role=role, accepted=accepted, **kwargs)
    return membership, ApiKeyFactory(user=membership.user).raw_key


def mid(membership) -> str:
    return f"{membership.user_id}_{membership.team_id}"


def patch(api_client, membership, body, key):
    return api_client.patch(f"/v1/memberships/{mid(membership)}", body, format="json", **bearer(key))


def delete(api_client, membership, key):
    return api_client.delete(f"/v1/memberships/{mid(membership)}", **bearer(key))


# --- reading ---------------------------------------------------------------------------------------


def test_list_shows_my_teams_memberships_and_my_pending_invitations(api_client, team):
    mine, key = join(team)
    teammate = MembershipFactory(team=team, accepted=False)
    invitation = MembershipFactory(user=mine.user, accepted=False)
    MembershipFactory(team=invitation.team)  # a team I am only invited to: its members stay hidden
    MembershipFactory()
    response = api_client.get("/v1/memberships", **bearer(key))
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["memberships"]] == [mine.pk, teammate.pk, invitation.pk]
    row = response.json()["memberships"][0]
    assert row == {
        "id": mine.pk,
        "userId": mine.user_id,
        "teamId": team.pk,
        "accepted": True,
        "role": "MEMBER",
        "disableImpersonation": False,
        "team": {"id": team.pk, "name": team.name, "slug": team.slug},
        "user": {
            "id": mine.user_id,
            "username": mine.user.username,
            "name": mine.user.name,
            "email": mine.user.email,
            "timeZone": mine.user.time_zone,
        },
    }


def test_list_filters_by_team_id(api_client, team):
    mine, key = join(team)
    other = MembershipFactory(user=mine.user)
    response = api_client.get(f"/v1/memberships?teamId={other.team_id}", **bearer(key))
    assert [row["id"] for row in response.json()["memberships"]] == [other.pk]
    assert api_client.get("/v1/memberships?teamId=x", **bearer(key)).status_code == 400


def test_get_one_with_an_oauth_token(api_client, team):
    mine, _ = join(team)
    teammate = MembershipFactory(team=team)
    token = AccessTokenFactory(user=mine.user, scope="READ_MEMBERSHIP")
    response = api_client.get(f"/memberships/{mid(teammate)}", **bearer(token.raw_token))
    assert response.status_code == 200
    assert response.json()["membership"]["id"] == teammate.pk


def test_membership_of_a_team_i_am_not_in_is_404(api_client, team):
    _, key = join(team)
    stranger = MembershipFactory()
    assert api_client.get(f"/v1/memberships/{mid(stranger)}", **bearer(key)).status_code == 404


@pytest.mark.parametrize("bad_id", ["12", "a_b", "1_", "_2", "1_2_3", "1-2"])
def test_malformed_membership_id_is_400(api_client, team, bad_id):
    _, key = join(team)
    response = api_client.get(f"/v1/memberships/{bad_id}", **bearer(key))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert "id" in response.json()["errors"]


def test_system_admin_sees_all_memberships_and_filters_by_user(api_client):
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN")).raw_key
    first, second = MembershipFactory(), MembershipFactory()
    response = api_client.get("/v1/memberships", **bearer(admin_key))
    assert {row["id"] for row in response.json()["memberships"]} == {first.pk, second.pk}
    response = api_client.get(f"/v1/memberships?userId={second.user_id}", **bearer(admin_key))
    assert [row["id"] for row in response.json()["memberships"]] == [second.pk]


def _membership_list_queries(api_client, key, team, count):
    MembershipFactory.create_batch(count, team=team)
    with CaptureQueriesContext(connection) as context:
        response = api_client.get("/v1/memberships?take=500", **bearer(key))
    assert len(response.json()["memberships"]) == Membership.objects.filter(team=team).count()
    return len(context.captured_queries)


def test_membership_list_query_count_is_constant(api_client, team):
    _, key = join(team)
    api_client.get("/v1/memberships", **bearer(key))
    one = _membership_list_queries(api_client, key, team, 1)
    assert one == _membership_list_queries(api_client, key, team, 49)
    assert one <= 5


# --- inviting ---------------------------------------------------------------------------------------


def test_admin_invites_a_user_as_a_pending_member(api_client, team):
    _, key = join(team, "ADMIN")
    invitee = UserFactory()
    response = api_client.post(
        "/v1/memberships", {"userId": invitee.pk, "teamId": team.pk}, format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["message"] == "Membership created successfully"
    assert (body["membership"]["accepted"], body["membership"]["role"]) == (False, "MEMBER")
    assert response["Location"].endswith(f"/v1/memberships/{invitee.pk}_{team.pk}")


def test_owner_may_invite_an_owner_with_an_oauth_token(api_client, team):
    owner, _ = join(team, "OWNER")
    token = AccessTokenFactory(user=owner.user, scope="WRITE_MEMBERSHIP")
    invitee = UserFactory()
    response = api_client.post(
        "/v1/memberships",
        {"userId": invitee.pk, "teamId": team.pk, "role": "OWNER"},
        format="json",
        **bearer(token.raw_token),
    )
    assert response.status_code == 200
    assert response.json()["membership"]["role"] == "OWNER"


def test_system_admin_may_add_an_accepted_member(api_client, team):
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN")).raw_key
    invitee = UserFactory()
    response = api_client.post(
        "/v1/memberships",
        {"userId": invitee.pk, "teamId": team.pk, "accepted": True},
        format="json",
        **bearer(admin_key),
    )
    assert response.status_code == 200
    assert response.json()["membership"]["accepted"] is True


@pytest.mark.parametrize(
    "role,accepted,body_extra,status",
    [
        ("MEMBER", True, {}, 403),  # a plain member may not invite
        ("ADMIN", False, {}, 403),  # a pending admin has no powers yet
        ("ADMIN", True, {"role": "OWNER"}, 403),  # only an owner grants OWNER
        ("OWNER", True, {"accepted": True}, 403),  # only system admins set accepted
    ],
)
def test_invitation_refusals(api_client, team, role, accepted, body_extra, status):
    _, key = join(team, role, accepted)
    invitee = UserFactory()
    before = snapshot()
    response = api_client.post(
        "/v1/memberships", {"userId": invitee.pk, "teamId": team.pk, **body_extra}, format="json", **bearer(key)
    )
    assert response.status_code == status
    assert snapshot() == before


def test_duplicate_membership_is_409(api_client, team):
    owner, key = join(team, "OWNER")
    existing = MembershipFactory(team=team, accepted=False)
    before = snapshot()
    response = api_client.post(
        "/v1/memberships", {"userId": existing.user_id, "teamId": team.pk}, format="json", **bearer(key)
    )
    assert response.status_code == 409
    assert snapshot() == before


@pytest.mark.parametrize(
    "body,field",
    [
        ({"teamId": "TEAM"}, "userId"),
        ({"userId": "USER"}, "teamId"),
        ({"userId": "USER", "teamId": "TEAM", "role": "KING"}, "role"),
        ({"userId": "USER", "teamId": "TEAM", "id": 3}, "id"),
        ({"userId": "USER", "teamId": "TEAM", "colour": 3}, "colour"),
        ({"userId": 999999999, "teamId": "TEAM"}, "userId"),
        ({"userId": "USER", "teamId": 999999999}, "teamId"),
        ({"userId": "USER", "teamId": "OTHER_TEAM"}, "teamId"),  # a team I cannot see does not exist
    ],
)
def test_invalid_invitation_is_400_naming_the_field(api_client, team, body, field):
    _, key = join(team, "OWNER")
    invitee, other_team = UserFactory(), TeamFactory()
    values = {"USER": invitee.pk, "TEAM": team.pk, "OTHER_TEAM": other_team.pk}
    body = {name: values.get(value, value) if isinstance(value, str) else value for name, value in body.items()}
    before = snapshot()
    response = api_client.post("/v1/memberships", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert snapshot() == before


# --- accepting ---------------------------------------------------------------------------------------


def test_only_the_invited_user_accepts_an_invitation(api_client, team):
    _, owner_key = join(team, "OWNER")
    invitation, invitee_key = join(team, accepted=False)
    before = snapshot()
    assert patch(api_client, invitation, {"accepted": True}, owner_key).status_code == 403
    assert snapshot() == before
    response = patch(api_client, invitation, {"accepted": True}, invitee_key)
    assert response.status_code == 200
    assert response.json()["membership"]["accepted"] is True


def test_accepted_can_only_be_set_to_true(api_client, team):
    join(team, "OWNER")
    mine, key = join(team)
    before = snapshot()
    response = patch(api_client, mine, {"accepted": False}, key)
    assert response.status_code == 400
    assert "accepted" in response.json()["errors"]
    assert snapshot() == before


@pytest.mark.parametrize("field", ["userId", "teamId", "id"])
def test_user_and_team_cannot_change(api_client, team, field):
    join(team, "OWNER")
    mine, key = join(team)
    before = snapshot()
    response = patch(api_client, mine, {field: 1}, key)
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert snapshot() == before


# --- roles ---------------------------------------------------------------------------------------


def test_admin_promotes_a_member_to_admin(api_client, team):
    _, admin_key = join(team, "ADMIN")
    target, _ = join(team)
    response = patch(api_client, target, {"role": "ADMIN"}, admin_key)
    assert response.status_code == 200
    assert response.json()["membership"]["role"] == "ADMIN"


def test_member_may_not_change_roles(api_client, team):
    _, member_key = join(team)
    target, _ = join(team)
    before = snapshot()
    assert patch(api_client, target, {"role": "ADMIN"}, member_key).status_code == 403
    assert snapshot() == before


def test_admin_may_not_grant_owner(api_client, team):
    _, admin_key = join(team, "ADMIN")
    target, _ = join(team)
    before = snapshot()
    assert patch(api_client, target, {"role": "OWNER"}, admin_key).status_code == 403
    assert snapshot() == before


def test_admin_may_not_change_an_owner(api_client, team):
    join(team, "OWNER")
    _, admin_key = join(team, "ADMIN")
    target, _ = join(team, "OWNER")
    before = snapshot()
    assert patch(api_client, target, {"role": "MEMBER"}, admin_key).status_code == 403
    assert snapshot() == before


def test_owner_grants_and_takes_away_owner(api_client, team):
    _, owner_key = join(team, "OWNER")
    target, _ = join(team)
    assert patch(api_client, target, {"role": "OWNER"}, owner_key).json()["membership"]["role"] == "OWNER"
    assert patch(api_client, target, {"role": "ADMIN"}, owner_key).json()["membership"]["role"] == "ADMIN"


def test_last_accepted_owner_cannot_be_demoted_even_by_a_system_admin(api_client, team):
    owner, owner_key = join(team, "OWNER")
    join(team, "OWNER", accepted=False)  # a pending owner does not count
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN")).raw_key
    before = snapshot()
    for key in (owner_key, admin_key):
        response = patch(api_client, owner, {"role": "ADMIN"}, key)
        assert response.status_code == 409
        assert response.json()["code"] == "conflict"
    assert snapshot() == before


def test_an_owner_may_step_down_when_another_owner_remains(api_client, team):
    owner, owner_key = join(team, "OWNER")
    join(team, "OWNER")
    assert patch(api_client, owner, {"role": "MEMBER"}, owner_key).json()["membership"]["role"] == "MEMBER"


def test_disable_impersonation_only_by_the_member(api_client, team):
    _, owner_key = join(team, "OWNER")
    target, target_key = join(team)
    before = snapshot()
    assert patch(api_client, target, {"disableImpersonation": True}, owner_key).status_code == 403
    assert snapshot() == before
    response = patch(api_client, target, {"disableImpersonation": True}, target_key)
    assert response.json()["membership"]["disableImpersonation"] is True


# --- removing ---------------------------------------------------------------------------------------


def test_a_member_may_leave(api_client, team):
    join(team, "OWNER")
    mine, key = join(team)
    response = delete(api_client, mine, key)
    assert response.status_code == 200
    assert response.json() == {"message": f"Membership with id: {mid(mine)} deleted successfully"}
    assert not Membership.objects.filter(pk=mine.pk).exists()


def test_an_invitee_may_decline_by_leaving(api_client, team):
    join(team, "OWNER")
    invitation, key = join(team, accepted=False)
    assert delete(api_client, invitation, key).status_code == 200


@pytest.mark.parametrize(
    "actor_role,target_role,status",
    [
        ("ADMIN", "MEMBER", 200),
        ("OWNER", "ADMIN", 200),
        ("MEMBER", "MEMBER", 403),
        ("ADMIN", "ADMIN", 403),
        ("ADMIN", "OWNER", 403),
        ("OWNER", "OWNER", 403),
    ],
)
def test_removing_someone_else_needs_a_higher_role(api_client, team, actor_role, target_role, status):
    join(team, "OWNER")
    _, actor_key = join(team, actor_role)
    target, _ = join(team, target_role)
    before = snapshot()
    assert delete(api_client, target, actor_key).status_code == status
    if status == 403:
        assert snapshot() == before
    else:
        assert not Membership.objects.filter(pk=target.pk).exists()


def test_last_accepted_owner_cannot_leave_or_be_removed(api_client, team):
    owner, owner_key = join(team, "OWNER")
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN")).raw_key
    before = snapshot()
    assert delete(api_client, owner, owner_key).status_code == 409
    assert delete(api_client, owner, admin_key).status_code == 409
    assert snapshot() == before


# --- credentials ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method,path,scope",
    [
        ("get", "/v1/memberships", "READ_MEMBERSHIP"),
        ("get", "/v1/memberships/{id}", "READ_MEMBERSHIP"),
        ("post", "/v1/memberships", "WRITE_MEMBERSHIP"),
        ("patch", "/v1/memberships/{id}", "WRITE_MEMBERSHIP"),
        ("delete", "/v1/memberships/{id}", "WRITE_MEMBERSHIP"),
    ],
)
def test_membership_endpoints_need_their_scope_and_credentials(api_client, team, method, path, scope):
    owner, _ = join(team, "OWNER")
    target = MembershipFactory(team=team)
    wrong = "READ_MEMBERSHIP" if scope.startswith("WRITE") else "READ_PROFILE"
    token = AccessTokenFactory(user=owner.user, scope=wrong)
    url = path.format(id=mid(target))
    before = snapshot()
    response = getattr(api_client, method)(
        url, {"role": "ADMIN"} if method != "get" else None, format="json", **bearer(token.raw_token)
    )
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert response["WWW-Authenticate"].endswith(f'scope="{scope}"')
    assert getattr(api_client, method)(url).status_code == 401
    assert snapshot() == before
