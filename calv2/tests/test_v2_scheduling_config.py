"""GET /v2/event-types/{eventTypeId}/scheduling-config as Cal.com's MCP server calls it
(`get_scheduling_config`: `event-types/{id}/scheduling-config`, reading `schedulingType`, `hosts`
with their weights, `hostGroups`, `isRRWeightsEnabled`, `maxLeadThreshold`)."""

import pytest

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from calv2.tests.helpers import V2Client, assert_error
from scheduling.models import SchedulingType
from scheduling.tests.factories import EventTypeFactory, HostFactory, TeamEventTypeFactory

pytestmark = pytest.mark.django_db

VERSION = "2024-06-14"


@pytest.fixture
def team(owner):
    team = TeamFactory()
    MembershipFactory(team=team, user=owner, role="OWNER", accepted=True)
    return team


def config_of(v2, event_type_id):
    return v2.call("GET", f"/v2/event-types/{event_type_id}/scheduling-config", version=VERSION)


def test_a_round_robin_event_type_answers_its_hosts_and_settings(v2, owner, team):
    colleague = UserFactory(name="Alan Turing", username="alan")
    MembershipFactory(team=team, user=colleague, accepted=True)
    event_type = TeamEventTypeFactory(team=team, scheduling_type=SchedulingType.ROUND_ROBIN)
    HostFactory(event_type=event_type, user=owner, is_fixed=True, priority=2, weight=100)
    HostFactory(event_type=event_type, user=colleague, priority=3, weight=150)

    answer = config_of(v2, event_type.pk)

    assert answer.status_code == 200, answer.content
    data = answer.json()["data"]
    assert (data["eventTypeId"], data["schedulingType"]) == (event_type.pk, "roundRobin")
    assert [(h["userId"], h["mandatory"], h["priority"], h["weight"], h["groupId"]) for h in data["hosts"]] == [
        (owner.pk, True, "medium", 100, None),
        (colleague.pk, False, "high", 150, None),
    ]
    assert data["hosts"][1]["name"] == "Alan Turing" and data["hosts"][1]["username"] == "alan"
    assert data["hostGroups"] == [] and data["isRRWeightsEnabled"] is True
    assert data["rescheduleWithSameRoundRobinHost"] is True
    assert data["maxLeadThreshold"] is None and data["assignAllTeamMembers"] is False


def test_a_collective_event_type_answers_its_hosts_only(v2, owner, team):
    event_type = TeamEventTypeFactory(team=team, scheduling_type=SchedulingType.COLLECTIVE)
    HostFactory(event_type=event_type, user=owner)

    data = config_of(v2, event_type.pk).json()["data"]

    assert set(data) == {"eventTypeId", "schedulingType", "hosts", "assignAllTeamMembers"}
    assert data["schedulingType"] == "collective"
    assert [host["userId"] for host in data["hosts"]] == [owner.pk] and "groupId" not in data["hosts"][0]


def test_a_personal_event_type_is_a_422_and_an_unseen_one_a_404(v2, owner, api_client):
    personal = EventTypeFactory(owner=owner)
    assert_error(config_of(v2, personal.pk), 422, "UnprocessableEntityException")
    someone_elses = EventTypeFactory(owner=UserFactory())
    assert_error(config_of(v2, someone_elses.pk), 404, "NotFoundException")
    assert_error(config_of(V2Client(api_client, UserFactory()), personal.pk), 404, "NotFoundException")
