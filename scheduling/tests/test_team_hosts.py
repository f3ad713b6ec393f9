"""Hosts of team event types over v1: Cal.com's `schedulingType` and `hosts`, members only, and a
member who leaves the team stops being a host."""

import pytest

from accounts.models import Membership, MembershipRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.models import EventType, Host
from scheduling.selectors.hosts import team_hosts
from scheduling.tests.factories import EventTypeFactory, HostFactory, TeamEventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return TeamFactory()


@pytest.fixture
def admin(team):
    user = UserFactory()
    MembershipFactory(user=user, team=team, role=MembershipRole.OWNER, accepted=True)
    return user


@pytest.fixture
def key(admin):
    return ApiKeyFactory(user=admin).raw_key


def member(team, accepted=True):
    user = UserFactory()
    MembershipFactory(user=user, team=team, accepted=accepted)
    return user


def test_create_round_robin_event_type_with_hosts(api_client, team, admin, key):
    alice, bob = member(team), member(team)
    body = {
        "title": "Demo",
        "slug": "demo",
        "length": 30,
        "teamId": team.pk,
        "schedulingType": "ROUND_ROBIN",
        "hosts": [
            {"userId": alice.pk, "isFixed": True},
            {"userId": bob.pk, "priority": 4, "weight": 50},
        ],
    }
    response = api_client.post("/v1/event-types", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    event_type = response.json()["event_type"]
    assert event_type["schedulingType"] == "ROUND_ROBIN"
    assert event_type["assignAllTeamMembers"] is False
    assert event_type["hosts"] == [
        {"userId": alice.pk, "isFixed": True, "priority": 2, "weight": 100},
        {"userId": bob.pk, "isFixed": False, "priority": 4, "weight": 50},
    ]
    fetched = api_client.get(f"/v1/event-types/{event_type['id']}", **bearer(key)).json()["event_type"]
    assert fetched["hosts"] == event_type["hosts"]
    listed = api_client.get("/v1/event-types", **bearer(key)).json()["event_types"]
    assert [row["hosts"] for row in listed] == [event_type["hosts"]]


def test_patch_replaces_the_host_list_and_switches_to_collective(api_client, team, admin, key):
    alice, bob = member(team), member(team)
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    HostFactory(event_type=event_type, user=alice)
    body = {"schedulingType": "COLLECTIVE", "hosts": [{"userId": bob.pk}]}
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert response.json()["event_type"]["schedulingType"] == "COLLECTIVE"
    assert [host["userId"] for host in response.json()["event_type"]["hosts"]] == [bob.pk]
    assert list(Host.objects.values_list("user_id", flat=True)) == [bob.pk]


@pytest.mark.parametrize("kind", ["pending", "outsider", "twice"])
def test_a_host_must_be_an_accepted_member_once(api_client, team, admin, key, kind):
    alice = member(team)
    other = {"pending": lambda: member(team, accepted=False), "outsider": UserFactory, "twice": lambda: alice}[kind]()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    HostFactory(event_type=event_type, user=alice)
    body = {"hosts": [{"userId": alice.pk}, {"userId": other.pk}]}
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "hosts[1].userId" in response.json()["errors"]
    assert list(Host.objects.values_list("user_id", flat=True)) == [alice.pk]


@pytest.mark.parametrize(
    "body",
    [
        {"schedulingType": "MANAGED"},
        {"hosts": [{"userId": 1, "priority": 5}]},
        {"hosts": [{"userId": 1, "weight": -1}]},
        {"hosts": [{"userId": 1, "mandatory": True}]},
    ],
)
def test_bad_host_settings_are_refused(api_client, team, admin, key, body):
    event_type = TeamEventTypeFactory(team=team, scheduling_type="")
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", body, format="json", **bearer(key))
    assert response.status_code == 400
    event_type.refresh_from_db()
    assert event_type.scheduling_type == ""
    assert not Host.objects.exists()


def test_hosts_need_a_scheduling_type_and_a_team(api_client, team, admin, key):
    alice = member(team)
    event_type = TeamEventTypeFactory(team=team, scheduling_type="")
    response = api_client.patch(
        f"/v1/event-types/{event_type.pk}", {"hosts": [{"userId": alice.pk}]}, format="json", **bearer(key)
    )
    assert response.status_code == 400
    assert "schedulingType" in response.json()["errors"]
    personal = EventTypeFactory(owner=admin)
    response = api_client.patch(
        f"/v1/event-types/{personal.pk}", {"schedulingType": "COLLECTIVE"}, format="json", **bearer(key)
    )
    assert response.status_code == 400
    assert "schedulingType" in response.json()["errors"]
    assert not Host.objects.exists()
    assert EventType.objects.filter(scheduling_type="").count() == 2


def test_hosts_and_assign_all_together_are_refused(api_client, team, admin, key):
    alice = member(team)
    event_type = TeamEventTypeFactory(team=team, scheduling_type="COLLECTIVE")
    body = {"hosts": [{"userId": alice.pk}], "assignAllTeamMembers": True}
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", body, format="json", **bearer(key))
    assert response.status_code == 400
    event_type.refresh_from_db()
    assert event_type.assign_all_team_members is False


def test_leaving_the_team_removes_the_host(api_client, team, admin, key):
    alice, bob = member(team), member(team)
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    for user in (alice, bob):
        HostFactory(event_type=event_type, user=user)
    alice_key = ApiKeyFactory(user=alice).raw_key
    response = api_client.delete(f"/v1/memberships/{alice.pk}_{team.pk}", **bearer(alice_key))
    assert response.status_code == 200, response.json()
    assert list(Host.objects.values_list("user_id", flat=True)) == [bob.pk]
    assert [host.user.pk for host in team_hosts(event_type)] == [bob.pk]


def test_assign_all_team_members_follows_the_team(team, admin):
    alice = member(team)
    event_type = TeamEventTypeFactory(team=team, scheduling_type="COLLECTIVE", assign_all_team_members=True)
    member(team, accepted=False)
    assert [host.user.pk for host in team_hosts(event_type)] == sorted([admin.pk, alice.pk])
    later = member(team)
    assert [host.user.pk for host in team_hosts(event_type)] == sorted([admin.pk, alice.pk, later.pk])
    Membership.objects.filter(user=alice).delete()
    assert [host.user.pk for host in team_hosts(event_type)] == sorted([admin.pk, later.pk])
    assert all(host.is_fixed for host in team_hosts(event_type))


def test_a_team_event_type_with_hosts_cannot_recur(api_client, team, admin, key):
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    body = {"recurringEvent": {"freq": 2, "interval": 1, "count": 4}}
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "recurringEvent" in response.json()["errors"]
    recurring = TeamEventTypeFactory(
        team=team, scheduling_type="", recurring_event={"freq": 2, "interval": 1, "count": 4}
    )
    refused = api_client.patch(
        f"/v1/event-types/{recurring.pk}", {"schedulingType": "COLLECTIVE"}, format="json", **bearer(key)
    )
    assert refused.status_code == 400
    event_type.refresh_from_db()
    recurring.refresh_from_db()
    assert event_type.recurring_event is None and recurring.scheduling_type == ""
