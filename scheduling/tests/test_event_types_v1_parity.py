"""Creating event types as Cal.com API v1's tests define it (calcom/cal.com,
apps/api/v1/test/lib/event-types/_post.test.ts): a system admin names `userId` or `teamId` and
may create for another user; anyone else creates for themselves."""

import pytest

from accounts.models import MembershipRole, UserRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from scheduling.models import EventType
from scheduling.tests.factories import ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BODY = {"title": "Tennis class", "slug": "tennis-class", "length": 60, "hidden": True}


@pytest.fixture
def admin():
    return UserFactory(role=UserRole.ADMIN)


def test_system_admin_without_user_id_or_team_id_is_a_400_and_creates_nothing(api_client, admin):
    # "should throw 400 if system-wide admin but neither userId nor teamId provided"
    response = api_client.post("/v1/event-types", BODY, format="json", **bearer(ApiKeyFactory(user=admin).raw_key))
    assert response.status_code == 400
    assert "userId" in response.json()["errors"]
    assert not EventType.objects.exists()


def test_system_admin_creates_an_event_type_for_a_user(api_client, admin):
    # "should create event type successfully if all conditions are met"
    member = UserFactory()
    schedule = ScheduleFactory(user=member)
    body = {**BODY, "userId": member.pk, "scheduleId": schedule.pk}
    response = api_client.post("/v1/event-types", body, format="json", **bearer(ApiKeyFactory(user=admin).raw_key))
    assert response.status_code == 200, response.json()
    assert response.json()["message"] == "Event type created successfully"
    assert response.json()["event_type"]["userId"] == member.pk
    created = EventType.objects.get()
    assert (created.owner_id, created.team_id, created.schedule_id) == (member.pk, None, schedule.pk)


def test_system_admin_may_name_themselves_or_a_team(api_client, admin):
    raw_key = ApiKeyFactory(user=admin).raw_key
    team = TeamFactory()
    own = api_client.post("/v1/event-types", {**BODY, "userId": admin.pk}, format="json", **bearer(raw_key))
    for_team = api_client.post("/v1/event-types", {**BODY, "teamId": team.pk}, format="json", **bearer(raw_key))
    assert (own.status_code, for_team.status_code) == (200, 200)
    assert own.json()["event_type"]["userId"] == admin.pk
    assert for_team.json()["event_type"]["teamId"] == team.pk


@pytest.mark.parametrize("body", [{"userId": 999999}, {"userId": "{member}", "teamId": "{team}"}, {"userId": "7"}])
def test_system_admins_bad_user_id_is_a_400_and_creates_nothing(api_client, admin, body):
    member, team = UserFactory(), TeamFactory()
    values = {"{member}": member.pk, "{team}": team.pk}
    body = {name: values.get(value, value) for name, value in body.items()}
    response = api_client.post(
        "/v1/event-types", {**BODY, **body}, format="json", **bearer(ApiKeyFactory(user=admin).raw_key)
    )
    assert response.status_code == 400
    assert not EventType.objects.exists()


def test_non_admin_naming_another_user_is_403_and_creates_nothing(api_client):
    # "should throw 401 if a non-admin user tries to create an event type with userId" (403 here:
    # the caller is known, the act is not allowed)
    body = {**BODY, "userId": UserFactory().pk}
    response = api_client.post("/v1/event-types", body, format="json", **bearer(ApiKeyFactory().raw_key))
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert not EventType.objects.exists()


def test_non_admin_naming_themselves_or_nobody_creates_their_own(api_client):
    user = UserFactory()
    raw_key = ApiKeyFactory(user=user).raw_key
    named = api_client.post("/v1/event-types", {**BODY, "userId": user.pk}, format="json", **bearer(raw_key))
    unnamed = api_client.post("/v1/event-types", {**BODY, "slug": "other"}, format="json", **bearer(raw_key))
    assert (named.status_code, unnamed.status_code) == (200, 200)
    assert set(EventType.objects.values_list("owner_id", flat=True)) == {user.pk}


def test_team_member_without_admin_role_cannot_create_for_the_team(api_client):
    # "should throw 401 if not system-wide admin and user cannot access teamId with required roles"
    user, team = UserFactory(), TeamFactory()
    MembershipFactory(user=user, team=team, role=MembershipRole.MEMBER, accepted=True)
    body = {**BODY, "teamId": team.pk}
    response = api_client.post("/v1/event-types", body, format="json", **bearer(ApiKeyFactory(user=user).raw_key))
    assert response.status_code == 403
    assert not EventType.objects.exists()


def test_user_id_cannot_change_on_patch(api_client, admin):
    member = UserFactory()
    raw_key = ApiKeyFactory(user=admin).raw_key
    created = api_client.post("/v1/event-types", {**BODY, "userId": member.pk}, format="json", **bearer(raw_key))
    event_type_id = created.json()["event_type"]["id"]
    response = api_client.patch(
        f"/v1/event-types/{event_type_id}", {"userId": admin.pk}, format="json", **bearer(raw_key)
    )
    assert response.status_code == 400
    assert EventType.objects.get().owner_id == member.pk
