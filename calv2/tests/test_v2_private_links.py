"""`/v2/event-types/{eventTypeId}/private-links[/{linkId}]`: Cal.com's time- and usage-based
private links, who may manage them, and refusals that change nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from calv2.tests.helpers import V2Client, assert_error
from private_links.models import PrivateLink
from scheduling.tests.factories import EventTypeFactory

pytestmark = pytest.mark.django_db

VERSION = "2024-06-14"


@pytest.fixture
def event_type(owner):
    return EventTypeFactory(owner=owner, slug="intro")


def test_usage_and_time_based_links(v2, event_type, settings):
    settings.BOOKER_URL = "https://book.example.com"
    base = f"/v2/event-types/{event_type.pk}/private-links"
    once = v2.call("POST", base, {}, version=VERSION)
    assert once.status_code == 201, once.content
    data = once.json()["data"]
    assert (data["maxUsageCount"], data["usageCount"], data["isExpired"]) == (1, 0, False)
    assert data["bookingUrl"] == f"https://book.example.com/d/{data['linkId']}/intro"

    until = (timezone.now() + timedelta(days=3)).replace(microsecond=0)
    timed = v2.call("POST", base, {"expiresAt": until.isoformat()}, version=VERSION).json()["data"]
    assert timed["isExpired"] is False and "maxUsageCount" not in timed

    listed = v2.call("GET", base, version=VERSION).json()["data"]
    assert [link["linkId"] for link in listed] == [data["linkId"], timed["linkId"]]

    more = v2.call("PATCH", f"{base}/{data['linkId']}", {"maxUsageCount": 5}, version=VERSION)
    assert more.status_code == 200 and more.json()["data"]["maxUsageCount"] == 5
    past = (timezone.now() - timedelta(days=1)).isoformat()
    expired = v2.call("PATCH", f"{base}/{timed['linkId']}", {"expiresAt": past}, version=VERSION)
    assert expired.json()["data"]["isExpired"] is True

    deleted = v2.call("DELETE", f"{base}/{data['linkId']}", version=VERSION)
    assert deleted.json()["data"] == {"linkId": data["linkId"], "message": "Private link deleted successfully"}
    assert list(PrivateLink.objects.values_list("link_id", flat=True)) == [timed["linkId"]]


def test_refusals_change_nothing(v2, owner, event_type, api_client):
    base = f"/v2/event-types/{event_type.pk}/private-links"
    link = v2.call("POST", base, {"maxUsageCount": 2}, version=VERSION).json()["data"]
    before = list(PrivateLink.objects.values())
    for body in ({"maxUsageCount": 0}, {"maxUsageCount": "3"}, {"expiresAt": "tomorrow"}):
        assert_error(v2.call("POST", base, body, version=VERSION), 400, "BadRequestException")
    assert_error(
        v2.call("PATCH", f"{base}/{link['linkId']}", {"expiresAt": timezone.now().isoformat()}, version=VERSION),
        400,
        "BadRequestException",
    )
    assert_error(v2.call("PATCH", f"{base}/unknown", {"maxUsageCount": 3}, version=VERSION), 404, "NotFoundException")

    stranger = V2Client(api_client, UserFactory())
    assert_error(stranger.call("GET", base, version=VERSION), 404, "NotFoundException")
    assert_error(stranger.call("DELETE", f"{base}/{link['linkId']}", version=VERSION), 404, "NotFoundException")

    team = TeamFactory()
    MembershipFactory(user=owner, team=team, role="MEMBER", accepted=True)
    team_event_type = EventTypeFactory(owner=None, team=team, schedule=None)
    member_call = v2.call("POST", f"/v2/event-types/{team_event_type.pk}/private-links", {}, version=VERSION)
    assert_error(member_call, 403, "ForbiddenException")
    assert list(PrivateLink.objects.values()) == before
