"""Cal.com v1's `/users`, `/api-keys` and `/invites` (apps/api/v1/pages/api/users, api-keys,
invites): who sees and changes what, the envelopes, and refusals that change nothing."""

import pytest

from accounts.models import ApiKey, Membership, User, UserRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from tests.support.credentials import auth, bearer

pytestmark = pytest.mark.django_db


# --- users ------------------------------------------------------------------------------------


def test_a_user_reads_and_edits_only_themselves(api_client):
    user, other = UserFactory(), UserFactory()
    credentials = auth(user)
    listed = api_client.get("/v1/users", **credentials).json()["users"]
    assert [item["id"] for item in listed] == [user.pk]
    assert api_client.get(f"/users/{user.pk}", **credentials).json()["user"]["email"] == user.email
    assert api_client.get(f"/v1/users/{other.pk}", **credentials).status_code == 404

    changed = api_client.patch(
        f"/v1/users/{user.pk}",
        {"name": "Ada L.", "timeZone": "Asia/Tokyo", "weekStart": "Monday"},
        format="json",
        **credentials,
    )
    assert changed.status_code == 200, changed.content
    assert (changed.json()["user"]["name"], changed.json()["user"]["timeZone"]) == ("Ada L.", "Asia/Tokyo")
    assert api_client.patch(f"/v1/users/{other.pk}", {"name": "X"}, format="json", **credentials).status_code == 404
    other.refresh_from_db()
    assert other.name != "X"


def test_bad_user_edits_change_nothing(api_client):
    user = UserFactory(name="Before")
    credentials = auth(user)
    for body in ({"timeZone": "Mars/Base"}, {"weekStart": "Someday"}, {"brandColor": "red"}, {"role": "ADMIN"}):
        assert api_client.patch(f"/v1/users/{user.pk}", body, format="json", **credentials).status_code == 400, body
    assert api_client.post("/v1/users", {"username": "new"}, format="json", **credentials).status_code == 405
    user.refresh_from_db()
    assert (user.name, user.role) == ("Before", UserRole.USER)


def test_a_system_admin_sees_and_edits_everyone(api_client):
    admin = UserFactory(role=UserRole.ADMIN)
    other = UserFactory()
    credentials = auth(admin)
    ids = {item["id"] for item in api_client.get("/v1/users?take=100", **credentials).json()["users"]}
    assert {admin.pk, other.pk} <= ids
    assert api_client.get(f"/v1/users?userId={other.pk}", **credentials).json()["users"][0]["id"] == other.pk
    changed = api_client.patch(f"/v1/users/{other.pk}", {"locale": "de"}, format="json", **credentials)
    assert changed.status_code == 200 and User.objects.get(pk=other.pk).locale == "de"


# --- API keys ---------------------------------------------------------------------------------


def test_api_keys_create_list_rename_and_revoke(api_client):
    user = UserFactory()
    key = ApiKeyFactory(user=user, note="first")
    created = api_client.post(
        "/v1/api-keys", {"note": "zapier", "neverExpires": True}, format="json", **bearer(key.raw_key)
    )
    assert created.status_code == 200, created.content
    body = created.json()
    new_key = body["api_key"]["key"]
    assert body["api_key"]["note"] == "zapier" and body["api_key"]["expiresAt"] is None
    assert "won't be displayed again" in body["message"]
    assert api_client.get("/v1/me", **bearer(new_key)).status_code == 200

    listed = api_client.get("/v1/api-keys", **bearer(key.raw_key)).json()["api_keys"]
    assert {item["note"] for item in listed} == {"first", "zapier"}
    assert all("key" not in item and "hashedKey" not in item for item in listed)
    new_id = body["api_key"]["id"]
    renamed = api_client.patch(f"/v1/api-keys/{new_id}", {"note": "make"}, format="json", **bearer(key.raw_key))
    assert renamed.json()["api_key"]["note"] == "make"
    unchanged = api_client.patch(f"/v1/api-keys/{new_id}", {}, format="json", **bearer(key.raw_key))
    assert unchanged.status_code == 200 and unchanged.json()["api_key"]["note"] == "make"

    revoked = api_client.delete(f"/v1/api-keys/{new_id}", **bearer(key.raw_key))
    assert revoked.json() == {"message": f"API key with id: {new_id} deleted successfully"}
    assert api_client.get("/v1/me", **bearer(new_key)).status_code == 401
    assert ApiKey.objects.get(pk=new_id).revoked_at is not None


def test_api_key_refusals_change_nothing(api_client):
    user, other = UserFactory(), UserFactory()
    key, theirs = ApiKeyFactory(user=user), ApiKeyFactory(user=other)
    count = ApiKey.objects.count()
    assert (
        api_client.post("/v1/api-keys", {"userId": other.pk}, format="json", **bearer(key.raw_key)).status_code == 403
    )
    assert (
        api_client.post("/v1/api-keys", {"expiresAt": "soon"}, format="json", **bearer(key.raw_key)).status_code == 400
    )
    assert api_client.get(f"/v1/api-keys/{theirs.pk}", **bearer(key.raw_key)).status_code == 404
    assert api_client.delete(f"/v1/api-keys/{theirs.pk}", **bearer(key.raw_key)).status_code == 404
    assert ApiKey.objects.count() == count and ApiKey.objects.get(pk=theirs.pk).revoked_at is None


# --- invites ----------------------------------------------------------------------------------


def test_a_team_admin_invites_by_username_or_email(api_client):
    admin, invitee, second = UserFactory(), UserFactory(username="grace"), UserFactory(email="alan@example.org")
    team = TeamFactory()
    MembershipFactory(user=admin, team=team, role="OWNER", accepted=True)
    credentials = auth(admin)
    answer = api_client.post(
        "/v1/invites", {"teamId": team.pk, "usernameOrEmail": "grace", "role": "MEMBER"}, format="json", **credentials
    )
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"success": True, "message": "grace has been invited."}
    membership = Membership.objects.get(user=invitee, team=team)
    assert (membership.role, membership.accepted) == ("MEMBER", False)
    by_email = {"teamId": team.pk, "usernameOrEmail": "ALAN@example.org", "role": "ADMIN"}
    assert api_client.post("/invites", by_email, format="json", **credentials).status_code == 200
    assert Membership.objects.get(user=second, team=team).role == "ADMIN"


def test_invite_refusals_change_nothing(api_client):
    member, invitee = UserFactory(), UserFactory(username="grace")
    team = TeamFactory()
    MembershipFactory(user=member, team=team, role="MEMBER", accepted=True)
    MembershipFactory(user=UserFactory(), team=team, role="OWNER", accepted=True)
    credentials = auth(member)
    before = Membership.objects.count()
    body = {"teamId": team.pk, "usernameOrEmail": "grace", "role": "MEMBER"}
    assert api_client.post("/v1/invites", body, format="json", **credentials).status_code == 403
    assert (
        api_client.post("/v1/invites", {**body, "usernameOrEmail": "nobody"}, format="json", **credentials).status_code
        == 400
    )
    assert api_client.post("/v1/invites", {**body, "accepted": True}, format="json", **credentials).status_code == 403
    assert api_client.post("/v1/invites", {**body, "role": "KING"}, format="json", **credentials).status_code == 400
    assert Membership.objects.count() == before
    assert not Membership.objects.filter(user=invitee).exists()
