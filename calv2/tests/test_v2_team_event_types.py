"""/v2/teams/{teamId}/event-types: team event types with Cal.com v2's host shapes."""

import pytest

from accounts.models import MembershipRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.models import EventType, Host
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

VERSION = {"HTTP_CAL_API_VERSION": "2024-06-14"}


@pytest.fixture
def team():
    return TeamFactory()


@pytest.fixture
def owner(team):
    user = UserFactory()
    MembershipFactory(user=user, team=team, role=MembershipRole.OWNER)
    return user


def member(team):
    user = UserFactory()
    MembershipFactory(user=user, team=team)
    return user


def test_create_and_read_a_round_robin_team_event_type(api_client, team, owner):
    alice, bob = member(team), member(team)
    key = ApiKeyFactory(user=owner).raw_key
    body = {
        "lengthInMinutes": 30,
        "title": "Demo",
        "slug": "demo",
        "schedulingType": "roundRobin",
        "hosts": [{"userId": alice.pk, "mandatory": True}, {"userId": bob.pk, "priority": "high", "weight": 50}],
    }
    response = api_client.post(f"/v2/teams/{team.pk}/event-types", body, format="json", **VERSION, **bearer(key))
    assert response.status_code == 201, response.json()
    data = response.json()["data"]
    assert data["teamId"] == team.pk
    assert data["schedulingType"] == "ROUND_ROBIN"
    assert data["assignAllTeamMembers"] is False
    assert [(host["userId"], host["mandatory"], host["priority"], host["weight"]) for host in data["hosts"]] == [
        (alice.pk, True, "medium", 100),
        (bob.pk, False, "high", 50),
    ]
    assert Host.objects.get(user=bob).priority == 3
    listed = api_client.get(f"/v2/teams/{team.pk}/event-types", **VERSION, **bearer(key)).json()["data"]
    assert [row["id"] for row in listed] == [data["id"]]
    one = api_client.get(f"/v2/teams/{team.pk}/event-types/{data['id']}", **VERSION, **bearer(key))
    assert one.json()["data"] == data
    patched = api_client.patch(
        f"/v2/teams/{team.pk}/event-types/{data['id']}",
        {"schedulingType": "collective", "assignAllTeamMembers": True, "hosts": []},
        format="json",
        **VERSION,
        **bearer(key),
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["data"]["schedulingType"] == "COLLECTIVE"
    assert patched.json()["data"]["assignAllTeamMembers"] is True
    deleted = api_client.delete(f"/v2/teams/{team.pk}/event-types/{data['id']}", **VERSION, **bearer(key))
    assert deleted.status_code == 200
    assert not EventType.objects.exists()


def test_a_host_outside_the_team_is_a_400_and_writes_nothing(api_client, team, owner):
    key = ApiKeyFactory(user=owner).raw_key
    body = {
        "lengthInMinutes": 30,
        "title": "Panel",
        "slug": "panel",
        "schedulingType": "collective",
        "hosts": [{"userId": UserFactory().pk}],
    }
    response = api_client.post(f"/v2/teams/{team.pk}/event-types", body, format="json", **VERSION, **bearer(key))
    assert response.status_code == 400
    assert not EventType.objects.exists()


@pytest.mark.parametrize("scheduling_type", ["managed", "ROUND_ROBIN", None])
def test_scheduling_type_is_required_and_named_as_in_v2(api_client, team, owner, scheduling_type):
    key = ApiKeyFactory(user=owner).raw_key
    body = {"lengthInMinutes": 30, "title": "Demo", "slug": "demo"}
    if scheduling_type is not None:
        body["schedulingType"] = scheduling_type
    response = api_client.post(f"/v2/teams/{team.pk}/event-types", body, format="json", **VERSION, **bearer(key))
    assert response.status_code == 400
    assert not EventType.objects.exists()


def test_a_member_reads_but_may_not_write_and_an_outsider_sees_nothing(api_client, team, owner):
    reader = member(team)
    key = ApiKeyFactory(user=owner).raw_key
    body = {"lengthInMinutes": 30, "title": "Demo", "slug": "demo", "schedulingType": "collective"}
    created = api_client.post(f"/v2/teams/{team.pk}/event-types", body, format="json", **VERSION, **bearer(key))
    event_type_id = created.json()["data"]["id"]
    reader_key = ApiKeyFactory(user=reader).raw_key
    path = f"/v2/teams/{team.pk}/event-types/{event_type_id}"
    assert api_client.get(path, **VERSION, **bearer(reader_key)).status_code == 200
    refused = api_client.patch(path, {"title": "Mine"}, format="json", **VERSION, **bearer(reader_key))
    assert refused.status_code == 403
    outsider = ApiKeyFactory(user=UserFactory()).raw_key
    assert api_client.get(path, **VERSION, **bearer(outsider)).status_code == 404
    assert api_client.get(f"/v2/teams/{team.pk}/event-types", **VERSION, **bearer(outsider)).json()["data"] == []


def test_webhooks_of_a_team_event_type(api_client, team, owner):
    key = ApiKeyFactory(user=owner).raw_key
    body = {"lengthInMinutes": 30, "title": "Demo", "slug": "demo", "schedulingType": "collective"}
    created = api_client.post(f"/v2/teams/{team.pk}/event-types", body, format="json", **VERSION, **bearer(key))
    event_type_id = created.json()["data"]["id"]
    path = f"/v2/teams/{team.pk}/event-types/{event_type_id}/webhooks"
    hook = {"subscriberUrl": "http://127.0.0.1:9/hook", "triggers": ["BOOKING_CREATED"], "active": True}
    response = api_client.post(path, hook, format="json", **VERSION, **bearer(key))
    assert response.status_code == 201, response.json()
    webhook_id = response.json()["data"]["id"]
    assert [row["id"] for row in api_client.get(path, **VERSION, **bearer(key)).json()["data"]] == [webhook_id]
    assert api_client.get(f"{path}/{webhook_id}", **VERSION, **bearer(key)).status_code == 200
    other_team = TeamFactory()
    MembershipFactory(user=owner, team=other_team, role=MembershipRole.OWNER)
    wrong = f"/v2/teams/{other_team.pk}/event-types/{event_type_id}/webhooks"
    assert api_client.get(wrong, **VERSION, **bearer(key)).status_code == 404
    assert api_client.post(wrong, hook, format="json", **VERSION, **bearer(key)).status_code == 404
