"""Teams over HTTP (docs/api.md, "Teams and memberships")."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Membership, Team
from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


def snapshot():
    return (
        list(Team.objects.order_by("id").values_list("id", "name", "slug", "bio", "logo", "hide_branding")),
        list(Membership.objects.order_by("id").values_list("id", "user_id", "team_id", "role", "accepted")),
    )


def member(role="MEMBER", accepted=True, team=None):
    membership = MembershipFactory(role=role, accepted=accepted, **({"team": team} if team else {}))
    return membership, ApiKeyFactory(user=membership.user)


def test_create_makes_the_caller_accepted_owner(api_client):
    key = ApiKeyFactory()
    body = {
        "name": "Sales",
        "slug": "sales",
        "bio": "We sell.",
        "logo": "https://example.com/l.png",
        "hideBranding": True,
    }
    response = api_client.post("/v1/teams", body, format="json", **bearer(key.raw_key))
    assert response.status_code == 200, response.json()
    team = response.json()["team"]
    assert response.json()["message"] == "Team created successfully"
    assert team == {"id": team["id"], **body}
    assert response["Location"].endswith(f"/v1/teams/{team['id']}")
    membership = Membership.objects.get(team_id=team["id"])
    assert (membership.user_id, membership.role, membership.accepted) == (key.user_id, "OWNER", True)


def test_create_with_a_taken_slug_is_409_and_writes_nothing(api_client):
    TeamFactory(slug="taken")
    key = ApiKeyFactory()
    before = snapshot()
    response = api_client.post("/v1/teams", {"name": "X", "slug": "taken"}, format="json", **bearer(key.raw_key))
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert snapshot() == before


@pytest.mark.parametrize(
    "body,field",
    [
        ({"slug": "a"}, "name"),
        ({"name": "A"}, "slug"),
        ({"name": "A", "slug": "not a slug"}, "slug"),
        ({"name": "A", "slug": "a", "logo": "not a url"}, "logo"),
        ({"name": "A", "slug": "a", "id": 4}, "id"),
        ({"name": "A", "slug": "a", "members": []}, "members"),
    ],
)
def test_invalid_team_is_400_naming_the_field(api_client, body, field):
    key = ApiKeyFactory()
    before = snapshot()
    response = api_client.post("/v1/teams", body, format="json", **bearer(key.raw_key))
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert snapshot() == before


def test_list_and_get_show_only_teams_where_the_caller_is_an_accepted_member(api_client):
    membership, key = member()
    MembershipFactory(user=key.user, accepted=False)  # a pending invitation is not membership yet
    TeamFactory()
    response = api_client.get("/v1/teams", **bearer(key.raw_key))
    assert [team["id"] for team in response.json()["teams"]] == [membership.team_id]
    token = AccessTokenFactory(user=key.user, scope="READ_MEMBERSHIP")
    response = api_client.get(f"/teams/{membership.team_id}", **bearer(token.raw_token))
    assert response.status_code == 200
    assert response.json()["team"]["slug"] == membership.team.slug


def test_a_team_the_caller_is_not_in_is_404(api_client):
    key = ApiKeyFactory()
    team = TeamFactory()
    before = snapshot()
    for method in ("get", "patch", "delete"):
        response = getattr(api_client, method)(
            f"/v1/teams/{team.pk}", {"name": "Hijacked"}, format="json", **bearer(key.raw_key)
        )
        assert response.status_code == 404
    assert snapshot() == before


def test_admin_or_owner_may_patch_member_may_not(api_client):
    admin_membership, admin_key = member("ADMIN")
    _, member_key = member("MEMBER", team=admin_membership.team)
    before = snapshot()
    response = api_client.patch(
        f"/v1/teams/{admin_membership.team_id}", {"name": "Nope"}, format="json", **bearer(member_key.raw_key)
    )
    assert response.status_code == 403
    assert snapshot() == before
    response = api_client.patch(
        f"/v1/teams/{admin_membership.team_id}", {"name": "Renamed"}, format="json", **bearer(admin_key.raw_key)
    )
    assert response.status_code == 200
    assert response.json()["team"]["name"] == "Renamed"


def test_only_an_owner_may_delete_a_team(api_client):
    owner_membership, owner_key = member("OWNER")
    _, admin_key = member("ADMIN", team=owner_membership.team)
    before = snapshot()
    assert api_client.delete(f"/v1/teams/{owner_membership.team_id}", **bearer(admin_key.raw_key)).status_code == 403
    assert snapshot() == before
    response = api_client.delete(f"/v1/teams/{owner_membership.team_id}", **bearer(owner_key.raw_key))
    assert response.json() == {"message": f"Team with id: {owner_membership.team_id} deleted successfully"}
    assert not Team.objects.filter(pk=owner_membership.team_id).exists()


def test_patch_to_a_taken_slug_is_409(api_client):
    TeamFactory(slug="taken")
    owner_membership, owner_key = member("OWNER")
    response = api_client.patch(
        f"/v1/teams/{owner_membership.team_id}", {"slug": "taken"}, format="json", **bearer(owner_key.raw_key)
    )
    assert response.status_code == 409


def test_system_admin_sees_every_team_and_filters_by_member(api_client):
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN"))
    first, second = MembershipFactory(), MembershipFactory()
    response = api_client.get("/v1/teams", **bearer(admin_key.raw_key))
    assert {team["id"] for team in response.json()["teams"]} == {first.team_id, second.team_id}
    response = api_client.get(f"/v1/teams?userId={second.user_id}", **bearer(admin_key.raw_key))
    assert [team["id"] for team in response.json()["teams"]] == [second.team_id]


def _team_list_queries(api_client, key, count):
    for _ in range(count):
        MembershipFactory(user=key.user)
    with CaptureQueriesContext(connection) as context:
        response = api_client.get("/v1/teams?take=500", **bearer(key.raw_key))
    assert len(response.json()["teams"]) == Membership.objects.filter(user=key.user).count()
    return len(context.captured_queries)


def test_team_list_query_count_is_constant(api_client):
    key = ApiKeyFactory()
    api_client.get("/v1/teams", **bearer(key.raw_key))
    one = _team_list_queries(api_client, key, 1)
    assert one == _team_list_queries(api_client, key, 49)
    assert one <= 5


@pytest.mark.parametrize(
    "method,path,scope",
    [
        ("get", "/v1/teams", "READ_MEMBERSHIP"),
        ("get", "/v1/teams/{id}", "READ_MEMBERSHIP"),
        ("post", "/v1/teams", "WRITE_MEMBERSHIP"),
        ("patch", "/v1/teams/{id}", "WRITE_MEMBERSHIP"),
        ("delete", "/v1/teams/{id}", "WRITE_MEMBERSHIP"),
    ],
)
def test_team_endpoints_need_their_scope_and_credentials(api_client, method, path, scope):
    owner_membership = MembershipFactory(role="OWNER")
    wrong = "READ_MEMBERSHIP" if scope.startswith("WRITE") else "READ_SCHEDULE"
    token = AccessTokenFactory(user=owner_membership.user, scope=wrong)
    url = path.format(id=owner_membership.team_id)
    before = snapshot()
    data = {"name": "Z", "slug": "z"} if method != "get" else None
    response = getattr(api_client, method)(url, data, format="json", **bearer(token.raw_token))
    assert response.status_code == 403
    assert response["WWW-Authenticate"].endswith(f'scope="{scope}"')
    assert getattr(api_client, method)(url).status_code == 401
    assert snapshot() == before
    right = AccessTokenFactory(user=owner_membership.user, scope=scope)
    response = getattr(api_client, method)(url, data, format="json", **bearer(right.raw_token))
    assert response.status_code == 200
