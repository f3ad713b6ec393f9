"""/v2/teams CRUD and /v2/teams/{teamId}/memberships CRUD over v1's team and membership rules."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Membership, MembershipRole, Team
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.models import Host
from scheduling.tests.factories import BookingFactory, EventTypeFactory, HostFactory, TeamEventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

VERSION = {"HTTP_CAL_API_VERSION": "2024-08-13"}


def test_create_read_update_delete_a_team(api_client):
    user = UserFactory()
    key = ApiKeyFactory(user=user).raw_key
    created = api_client.post(
        "/v2/teams", {"name": "Sales Team", "bio": "We sell"}, format="json", **VERSION, **bearer(key)
    )
    assert created.status_code == 201, created.json()
    team = created.json()["data"]
    assert team["slug"] == "sales-team"
    assert Membership.objects.get(team_id=team["id"]).role == MembershipRole.OWNER
    path = f"/v2/teams/{team['id']}"
    assert api_client.get(path, **VERSION, **bearer(key)).json()["data"] == team
    patched = api_client.patch(path, {"name": "Sales"}, format="json", **VERSION, **bearer(key))
    assert patched.status_code == 200 and patched.json()["data"]["name"] == "Sales"
    assert [row["id"] for row in api_client.get("/v2/teams", **VERSION, **bearer(key)).json()["data"]] == [team["id"]]
    outsider = ApiKeyFactory(user=UserFactory()).raw_key
    assert api_client.get(path, **VERSION, **bearer(outsider)).status_code == 404
    assert api_client.delete(path, **VERSION, **bearer(key)).status_code == 200
    assert not Team.objects.exists()


def test_a_duplicate_slug_is_a_409_and_a_bad_body_a_400(api_client):
    TeamFactory(slug="taken")
    key = ApiKeyFactory().raw_key
    assert (
        api_client.post(
            "/v2/teams", {"name": "X", "slug": "taken"}, format="json", **VERSION, **bearer(key)
        ).status_code
        == 409
    )
    assert api_client.post("/v2/teams", {"slug": "x"}, format="json", **VERSION, **bearer(key)).status_code == 400
    assert Team.objects.count() == 1


def test_memberships_follow_v1s_rules_and_leaving_removes_the_host(api_client):
    team = TeamFactory()
    owner, newcomer = UserFactory(), UserFactory()
    MembershipFactory(user=owner, team=team, role=MembershipRole.OWNER)
    owner_key, newcomer_key = ApiKeyFactory(user=owner).raw_key, ApiKeyFactory(user=newcomer).raw_key
    base = f"/v2/teams/{team.pk}/memberships"
    invited = api_client.post(
        base, {"userId": newcomer.pk, "role": "MEMBER"}, format="json", **VERSION, **bearer(owner_key)
    )
    assert invited.status_code == 201, invited.json()
    membership = invited.json()["data"]
    assert membership["accepted"] is False
    assert set(membership["user"]) == {"avatarUrl", "username", "name", "email"}
    path = f"{base}/{membership['id']}"
    refused = api_client.patch(path, {"accepted": True}, format="json", **VERSION, **bearer(owner_key))
    assert refused.status_code == 403
    accepted = api_client.patch(path, {"accepted": True}, format="json", **VERSION, **bearer(newcomer_key))
    assert accepted.status_code == 200 and accepted.json()["data"]["accepted"] is True
    listed = api_client.get(base, **VERSION, **bearer(newcomer_key)).json()["data"]
    assert sorted(row["userId"] for row in listed) == sorted([owner.pk, newcomer.pk])
    event_type = TeamEventTypeFactory(team=team)
    HostFactory(event_type=event_type, user=newcomer)
    assert api_client.delete(path, **VERSION, **bearer(newcomer_key)).status_code == 200
    assert not Host.objects.exists()
    duplicate = api_client.post(base, {"userId": owner.pk}, format="json", **VERSION, **bearer(owner_key))
    assert duplicate.status_code == 409
    owner_membership = Membership.objects.get(user=owner)
    last_owner = api_client.delete(f"{base}/{owner_membership.pk}", **VERSION, **bearer(owner_key))
    assert last_owner.status_code == 409
    assert Membership.objects.filter(team=team).count() == 1


def test_team_bookings_list_the_teams_bookings_the_caller_may_see(api_client):
    team = TeamFactory()
    admin, host = UserFactory(), UserFactory()
    MembershipFactory(user=admin, team=team, role=MembershipRole.ADMIN)
    MembershipFactory(user=host, team=team)
    event_type = TeamEventTypeFactory(team=team)
    start = timezone.now() + timedelta(days=3)
    booking = BookingFactory(
        organizer=host, event_type=event_type, start_time=start, end_time=start + timedelta(minutes=30)
    )
    BookingFactory(organizer=admin, event_type=EventTypeFactory(owner=admin))  # personal: not the team's
    key = ApiKeyFactory(user=admin).raw_key
    response = api_client.get(f"/v2/teams/{team.pk}/bookings", **VERSION, **bearer(key))
    assert response.status_code == 200, response.json()
    assert [row["uid"] for row in response.json()["data"]] == [booking.uid]
    assert response.json()["pagination"]["totalItems"] == 1
    outsider = ApiKeyFactory(user=UserFactory()).raw_key
    assert api_client.get(f"/v2/teams/{team.pk}/bookings", **VERSION, **bearer(outsider)).status_code == 404
