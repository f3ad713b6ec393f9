"""The base viewset's rules (docs/api.md, Conventions): envelopes, pagination, userId rule,
strict bodies, errors.

A tiny team resource is mounted just for these tests (`urls` marker), so the framework is tested
on its own, apart from any real resource's rules.
"""

from urllib.parse import urlencode

import pytest
from django.core.cache import cache
from django.urls import include, path

from accounts.models import Team
from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, TeamFactory, UserFactory
from core import ratelimit
from core.serializers import ApiModelSerializer
from core.viewsets import (
    CrudResourceViewSet,
    ResourceRouter,
)
from tests.support.credentials import bearer

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


class ThingSerializer(ApiModelSerializer):
    class Meta:
        model = Team
        fields = ["id", "name", "slug", "hide_branding", "created_at"]
        read_only_fields = ["id", "created_at"]


class ThingViewSet(CrudResourceViewSet):
    scopes = {
        "GET": "READ_MEMBERSHIP",
        "POST": "WRITE_MEMBERSHIP",
        "PATCH": "WRITE_MEMBERSHIP",
        "DELETE": "WRITE_MEMBERSHIP",
    }
    envelope_singular = "thing"
    envelope_plural = "things"
    serializer_class = ThingSerializer

    def get_queryset(self):
        self.requested_user_ids()
        order = {"name": ("-name", "-id"), "slug": ("slug",)}.get(self.request.query_params.get("orderBy"), ())
        return Team.objects.order_by(*order)

    def perform_create(self, data):
        return Team.objects.create(**data)

    def perform_update(self, instance, data):
        for key, value in data.items():
            setattr(instance, key, value)
        instance.save()
        return instance

    def perform_destroy(self, instance):
        instance.delete()


router = ResourceRouter()
router.register("things", ThingViewSet, basename="thing")
urlpatterns = [path("v1/", include(router.urls))]
handler404 = "core.views.not_found"


@pytest.fixture
def key():
    return ApiKeyFactory()


def test_list_envelope_pagination_and_link_header(api_client, key):
    TeamFactory.create_batch(5)
    response = api_client.get("/v1/things?take=2&page=2", **bearer(key.raw_key))
    assert response.status_code == 200
    body = response.json()
    assert [thing["id"] for thing in body["things"]] == sorted(thing["id"] for thing in body["things"])
    assert len(body["things"]) == 2
    assert body["pagination"] == {
        "page": 2,
        "take": 2,
        "total": 5,
        "totalIsExact": True,
        "hasNextPage": True,
        "nextCursor": body["pagination"]["nextCursor"],
    }
    assert body["pagination"]["nextCursor"]
    assert "page=3" in response["Link"] and 'rel="next"' in response["Link"]
    assert 'rel="prev"' in response["Link"]
    assert response["RateLimit-Limit"] == "600"


def _counted(api_client, key, url: str) -> tuple[dict, bool]:
    """The pagination of `url` and whether answering it ran a COUNT."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = api_client.get(url, **bearer(key.raw_key))
    assert response.status_code == 200, response.content
    return response.json()["pagination"], any("COUNT(" in query["sql"] for query in captured.captured_queries)


@pytest.mark.parametrize(
    "query,total,has_next,counted",
    [
        ("take=10", 5, False, False),  # the whole list on the first page: its rows are the total
        ("take=5", 5, False, False),  # exactly one page: the row after it is asked for, and is not there
        ("take=2&page=3", 5, False, False),  # the last page: the rows before it and its own
        ("take=2&page=2", 5, True, True),  # rows after the page: counted
        ("take=4&page=2", 5, False, False),
        ("take=2&page=4", 5, False, True),  # past the end: nothing in hand, counted
        ("take=5&page=2", 5, False, True),
    ],
)
def test_the_total_is_exact_and_a_list_that_ends_on_its_page_is_not_counted(
    api_client, key, query, total, has_next, counted
):
    TeamFactory.create_batch(5)

    pagination, ran_count = _counted(api_client, key, f"/v1/things?{query}")

    assert (pagination["total"], pagination["hasNextPage"], ran_count) == (total, has_next, counted)


def test_an_empty_list_has_total_zero_without_a_count(api_client, key):
    pagination, ran_count = _counted(api_client, key, "/v1/things")

    assert (pagination["total"], pagination["hasNextPage"], ran_count) == (0, False, False)


def walk(api_client, key, query: str) -> tuple[list[int], list[dict], list[str]]:
    """Every page of /v1/things from the first by `after`: the ids, the paginations, the links."""
    response = api_client.get(f"/v1/things?{query}", **bearer(key.raw_key))
    ids, paginations, links = [], [], []
    while True:
        assert response.status_code == 200, response.content
        body = response.json()
        ids += [thing["id"] for thing in body["things"]]
        paginations.append(body["pagination"])
        links.append(response.get("Link", ""))
        cursor = body["pagination"]["nextCursor"]
        if cursor is None:
            return ids, paginations, links
        response = api_client.get(f"/v1/things?{query}&{urlencode({'after': cursor})}", **bearer(key.raw_key))


def test_after_walks_every_row_once_in_order_with_next_links(api_client, key):
    teams = TeamFactory.create_batch(5)
    ids, paginations, links = walk(api_client, key, "take=2")
    assert ids == sorted(team.pk for team in teams)
    assert [pagination["page"] for pagination in paginations] == [1, None, None]
    assert [pagination["hasNextPage"] for pagination in paginations] == [True, True, False]
    assert {pagination["total"] for pagination in paginations} == {5}
    assert 'rel="next"' in links[1] and "after=" in links[1] and "page=" not in links[1]
    assert 'rel="prev"' not in links[1]
    assert links[2] == ""


def test_after_follows_an_order_of_several_columns_with_ties(api_client, key):
    teams = [TeamFactory(name=name) for name in ["b", "a", "b", "c", "b", "a"]]
    ids, _, _ = walk(api_client, key, "take=2&orderBy=name")
    assert ids == [team.pk for team in sorted(teams, key=lambda team: (team.name, team.pk), reverse=True)]


def test_a_cursor_page_costs_the_queries_of_the_first_page(api_client, key, django_assert_num_queries):
    TeamFactory.create_batch(6)
    first = api_client.get("/v1/things?take=2", **bearer(key.raw_key)).json()
    with django_assert_num_queries(count_queries(api_client, key, "/v1/things?take=2")):
        api_client.get("/v1/things", {"take": 2, "after": first["pagination"]["nextCursor"]}, **bearer(key.raw_key))


def count_queries(api_client, key, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        api_client.get(url, **bearer(key.raw_key))
    return len(captured)


def tampered(cursor: str) -> str:
    payload, signature = cursor.rsplit(":", 1)
    return f"{payload[:-1]}{'A' if payload[-1] != 'A' else 'B'}:{signature}"


@pytest.mark.parametrize(
    "make_query",
    [
        lambda cursor: {"after": tampered(cursor)},
        lambda cursor: {"after": "garbage"},
        lambda cursor: {"after": ""},
        lambda cursor: {"after": cursor, "page": "2"},
        lambda cursor: {"after": [cursor, cursor]},
        lambda cursor: {"after": cursor, "orderBy": "name"},  # given out for another order
        lambda cursor: {"after": cursor, "orderBy": "slug"},  # an order a cursor cannot follow
    ],
)
def test_a_bad_cursor_is_a_400_naming_after_and_changes_nothing(api_client, key, make_query):
    TeamFactory.create_batch(3)
    before = list(Team.objects.order_by("id").values())
    cursor = api_client.get("/v1/things?take=1", **bearer(key.raw_key)).json()["pagination"]["nextCursor"]
    response = api_client.get("/v1/things", {"take": 1, **make_query(cursor)}, **bearer(key.raw_key))
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "validation_error"
    assert "after" in response.json()["errors"]
    assert list(Team.objects.order_by("id").values()) == before


def test_a_cursor_of_another_list_is_refused(api_client, key):
    from core import keyset

    TeamFactory.create_batch(2)
    columns = keyset.keyset_columns(Team.objects.order_by("id"))
    foreign = keyset.encode("schedules", columns, [1])
    response = api_client.get("/v1/things", {"after": foreign}, **bearer(key.raw_key))
    assert response.status_code == 400
    assert "another list" in response.json()["errors"]["after"][0]


def test_an_order_a_cursor_cannot_follow_has_no_next_cursor(api_client, key):
    TeamFactory.create_batch(3)
    body = api_client.get("/v1/things?take=1&orderBy=slug", **bearer(key.raw_key)).json()
    assert body["pagination"]["hasNextPage"] is True
    assert body["pagination"]["nextCursor"] is None


@pytest.mark.parametrize(
    "query,field", [("take=501", "take"), ("take=abc", "take"), ("page=0", "page"), ("take=0", "take")]
)
def test_bad_pagination_is_a_validation_error_naming_the_parameter(api_client, key, query, field):
    response = api_client.get(f"/v1/things?{query}", **bearer(key.raw_key))
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["errors"]


def test_create_get_patch_delete_envelopes(api_client, key):
    response = api_client.post(
        "/v1/things", {"name": "A", "slug": "a", "hideBranding": True}, format="json", **bearer(key.raw_key)
    )
    assert response.status_code == 200, response.json()
    created = response.json()
    assert created["message"] == "Thing created successfully"
    thing_id = created["thing"]["id"]
    assert created["thing"]["hideBranding"] is True
    assert response["Location"].endswith(f"/v1/things/{thing_id}")
    assert api_client.get(f"/v1/things/{thing_id}", **bearer(key.raw_key)).json()["thing"]["slug"] == "a"
    response = api_client.patch(f"/v1/things/{thing_id}", {"name": "B"}, format="json", **bearer(key.raw_key))
    assert response.json() == {"thing": {**created["thing"], "name": "B"}}
    assert (
        api_client.put(f"/v1/things/{thing_id}", {"name": "C"}, format="json", **bearer(key.raw_key)).status_code == 405
    )
    response = api_client.delete(f"/v1/things/{thing_id}", **bearer(key.raw_key))
    assert response.json() == {"message": f"Thing with id: {thing_id} deleted successfully"}
    assert not Team.objects.filter(pk=thing_id).exists()


@pytest.mark.parametrize("field", ["id", "createdAt", "colour"])
def test_unknown_or_read_only_field_is_rejected_by_name(api_client, key, field):
    response = api_client.post("/v1/things", {"name": "A", "slug": "a", field: 1}, format="json", **bearer(key.raw_key))
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Team.objects.exists()


def test_malformed_json_and_wrong_content_type(api_client, key):
    response = api_client.generic("POST", "/v1/things", "{nope", content_type="application/json", **bearer(key.raw_key))
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_request"
    response = api_client.generic(
        "POST", "/v1/things", "name=a", content_type="application/x-www-form-urlencoded", **bearer(key.raw_key)
    )
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
    assert not Team.objects.exists()


def test_missing_object_and_unknown_path_are_problem_404(api_client, key):
    response = api_client.get("/v1/things/999999", **bearer(key.raw_key))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    response = api_client.get("/v1/nothing-here", **bearer(key.raw_key))
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_user_id_filter_of_someone_else_is_forbidden_for_non_admins(api_client, key):
    other = UserFactory()
    assert api_client.get(f"/v1/things?userId={key.user_id}", **bearer(key.raw_key)).status_code == 200
    response = api_client.get(f"/v1/things?userId={other.pk}", **bearer(key.raw_key))
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    admin_key = ApiKeyFactory(user=UserFactory(role="ADMIN"))
    assert (
        api_client.get(f"/v1/things?userId={other.pk}&userId={key.user_id}", **bearer(admin_key.raw_key)).status_code
        == 200
    )


def test_wrong_scope_is_403_with_www_authenticate_and_no_credentials_401(api_client):
    token = AccessTokenFactory(scope="READ_PROFILE")
    response = api_client.get("/v1/things", **bearer(token.raw_token))
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert 'scope="READ_MEMBERSHIP"' in response["WWW-Authenticate"]
    assert response["RateLimit-Remaining"]
    response = api_client.get("/v1/things")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_rate_limit_refuses_with_429_and_retry_after(api_client, settings, monkeypatch):
    cache.clear()
    settings.RATE_LIMIT_PER_MINUTE = 2
    clock = iter([1_800_000_030.0, 1_800_000_040.0, 1_800_000_050.0, 1_800_000_060.0])
    # The rate limit's clock (Redis' own by default), 10 s apart from one request to the next.
    counted = ratelimit.hit
    monkeypatch.setattr("core.ratelimit.hit", lambda key: counted(key, now=next(clock)))
    token = AccessTokenFactory(scope="READ_MEMBERSHIP")
    responses = [api_client.get("/v1/things", **bearer(token.raw_token)) for _ in range(3)]
    assert [response.status_code for response in responses] == [200, 200, 429]
    assert [response["RateLimit-Remaining"] for response in responses] == ["1", "0", "0"]
    assert responses[0]["RateLimit-Limit"] == "2"
    # Until the oldest counted request leaves the sliding minute.
    assert [response["RateLimit-Reset"] for response in responses] == ["60", "50", "40"]
    refused = responses[-1]
    assert refused.json()["code"] == "rate_limited"
    assert refused["Retry-After"] == "40"
    assert refused["Content-Type"] == "application/problem+json"
    other = AccessTokenFactory(scope="READ_MEMBERSHIP")
    assert api_client.get("/v1/things", **bearer(other.raw_token)).status_code == 200


def test_a_refused_scope_spends_one_unit_of_budget_per_request(api_client, settings):
    cache.clear()
    settings.RATE_LIMIT_PER_MINUTE = 2
    token = AccessTokenFactory(scope="READ_PROFILE")
    responses = [api_client.get("/v1/things", **bearer(token.raw_token)) for _ in range(3)]
    assert [response.status_code for response in responses] == [403, 403, 429]
    assert [response.json()["code"] for response in responses] == ["insufficient_scope"] * 2 + ["rate_limited"]
    # Counted once each, although DRF asks the throttle again after the permission check.
    assert [response["RateLimit-Remaining"] for response in responses] == ["1", "0", "0"]
    assert responses[-1]["Retry-After"]
