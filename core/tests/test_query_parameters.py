"""Declared query parameters (core.query; docs/api.md, "For developers: list filters"): each kind
reads a value strictly (docs/api.md, "Input rules") and refuses it with a 400 naming the parameter,
and the OpenAPI document lists exactly the parameters each list declares."""

from datetime import UTC, datetime

import pytest
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from accounts.tests.factories import TeamFactory, UserFactory
from core.pagination import PagePagination
from core.query import (
    Boolean,
    Choice,
    Email,
    Instant,
    Integer,
    ListOf,
    QueryParameters,
    Text,
    TimeZone,
)
from core.serializers import to_camel
from core.viewsets import ResourceViewSet
from tests.support.credentials import auth
from webhooks.tests.factories import WebhookFactory


def request_with(query: str) -> Request:
    return Request(APIRequestFactory().get(f"/things?{query}"))


def refusal(declaration, query: str) -> dict:
    with pytest.raises(ValidationError) as caught:
        declaration.parse(request_with(query))
    return {name: [str(message) for message in messages] for name, messages in caught.value.detail.items()}


class Filters(QueryParameters):
    booking_id = Integer(minimum=1, maximum=1000)
    success = Boolean()
    slug = Text()
    sort_by = Choice({"createdAt": "created_at", "updatedAt": "updated_at"})
    order = Choice(["asc", "desc"], default="asc")
    status = ListOf(Choice(["ACCEPTED", "PENDING", "upcoming"], normalize=str.upper), comma_separated=True)
    event_type_id = ListOf(Integer(minimum=1), comma_separated=True)
    attendee_email = ListOf(Email())
    after = Instant()
    before = Instant(end=True)


# --- reading -----------------------------------------------------------------------------------


def test_absent_parameters_are_their_defaults():
    assert Filters.parse(request_with("")) == {
        "booking_id": None,
        "success": None,
        "slug": None,
        "sort_by": None,
        "order": "asc",
        "status": [],
        "event_type_id": [],
        "attendee_email": [],
        "after": None,
        "before": None,
    }


def test_each_kind_reads_its_value():
    values = Filters.parse(
        request_with(
            "bookingId=12&success=false&slug=intro&sortBy=updatedAt&order=desc&status=accepted,PENDING"
            "&status=upcoming&eventTypeId=3,4&eventTypeId=5&attendeeEmail=a@example.org&attendeeEmail=b@example.org"
            "&after=2030-01-02T09:30:00%2B01:00&before=2030-01-02"
        )
    )

    assert values == {
        "booking_id": 12,
        "success": False,
        "slug": "intro",
        "sort_by": "updated_at",
        "order": "desc",
        "status": ["ACCEPTED", "PENDING", "UPCOMING"],
        "event_type_id": [3, 4, 5],
        "attendee_email": ["a@example.org", "b@example.org"],
        "after": datetime(2030, 1, 2, 8, 30, tzinfo=UTC),
        "before": datetime(2030, 1, 3, tzinfo=UTC),  # an end date includes the whole day
    }


def test_an_unencoded_plus_of_an_offset_is_read_as_the_offset():
    assert Filters.parse(request_with("after=2030-01-02T09:30:00+01:00"))["after"] == datetime(
        2030, 1, 2, 8, 30, tzinfo=UTC
    )


def test_an_instant_without_offset_is_in_the_zone_of_an_earlier_parameter():
    class Window(QueryParameters):
        time_zone = TimeZone(default="UTC")
        start = Instant(zone_from="time_zone")

    berlin = Window.parse(request_with("timeZone=Europe/Berlin&start=2030-01-02"))
    utc = Window.parse(request_with("start=2030-01-02"))

    assert berlin["start"] == datetime(2030, 1, 1, 23, tzinfo=UTC)
    assert utc["start"] == datetime(2030, 1, 2, tzinfo=UTC)


def test_a_declaration_reads_its_parents_parameters_first():
    class Base(QueryParameters):
        team_id = Integer()

    class Child(Base):
        slug = Text()

    assert list(Child.declared) == ["team_id", "slug"]
    assert list(Base.declared) == ["team_id"]


# --- refusing: a 400 naming the parameter --------------------------------------------------------


@pytest.mark.parametrize(
    "query,errors",
    [
        ("bookingId=%D9%A5", {"bookingId": ["'٥' is not a whole number written with the digits 0-9."]}),
        ("bookingId=%2B5", {"bookingId": ["'+5' is not a whole number written with the digits 0-9."]}),
        ("bookingId=%205", {"bookingId": ["' 5' is not a whole number written with the digits 0-9."]}),
        ("bookingId=5.0", {"bookingId": ["'5.0' is not a whole number written with the digits 0-9."]}),
        ("bookingId=0", {"bookingId": ["Must be 1 or more."]}),
        ("bookingId=1001", {"bookingId": ["Must be at most 1000."]}),
        ("bookingId=abc&bookingId=5", {"bookingId": ["Give this parameter once."]}),
        ("bookingId=", {"bookingId": ["Must not be empty."]}),
        ("success=yes", {"success": ["'yes' is not 'true' or 'false'."]}),
        ("success=True", {"success": ["'True' is not 'true' or 'false'."]}),
        ("slug=a&slug=b", {"slug": ["Give this parameter once."]}),
        ("slug=", {"slug": ["Must not be empty."]}),
        ("sortBy=startTime", {"sortBy": ["'startTime' is not one of createdAt, updatedAt."]}),
        ("order=up", {"order": ["'up' is not one of asc, desc."]}),
        ("status=soon", {"status": ["'soon' is not one of ACCEPTED, PENDING, upcoming."]}),
        ("eventTypeId=1&eventTypeId=0", {"eventTypeId": ["Must be 1 or more."]}),
        ("attendeeEmail=not-an-email", {"attendeeEmail": ["'not-an-email' is not an email address."]}),
        ("attendeeEmail=", {"attendeeEmail": ["Must not be empty."]}),
        ("after=yesterday", {"after": ["'yesterday' is not an ISO 8601 date or date-time."]}),
        ("after=1800-01-01", {"after": ["'1800-01-01' is outside the supported years 1900–9000."]}),
        ("before=2026-13-01", {"before": ["'2026-13-01' is not an ISO 8601 date or date-time."]}),
    ],
)
def test_a_bad_value_is_refused_naming_the_parameter(query, errors):
    assert refusal(Filters, query) == errors


def test_a_missing_required_parameter_and_a_bad_time_zone_are_refused():
    class Window(QueryParameters):
        event_type_id = Integer(required=True)
        time_zone = TimeZone()

    assert refusal(Window, "timeZone=UTC") == {"eventTypeId": ["This parameter is required."]}
    assert refusal(Window, "eventTypeId=1&timeZone=europe/berlin") == {
        "timeZone": ["'europe/berlin' is not a valid IANA time zone."]
    }


def test_the_first_bad_parameter_in_declaration_order_is_the_one_refused():
    assert refusal(Filters, "order=up&bookingId=x") == {
        "bookingId": ["'x' is not a whole number written with the digits 0-9."]
    }


# --- documenting ---------------------------------------------------------------------------------


def test_each_kind_gives_its_openapi_schema():
    class Documented(QueryParameters):
        booking_id = Integer(minimum=1, description="Only this booking's.")
        take = Integer(minimum=1, maximum=500, default=100)
        success = Boolean()
        order = Choice(["asc", "desc"], default="asc")
        sort_by = Choice({"createdAt": "created_at"})
        status = ListOf(Choice(["ACCEPTED"]), comma_separated=True)
        start_time = Instant(required=True)

    documented = {parameter.name: parameter for parameter in Documented.openapi_parameters()}

    assert list(documented) == ["bookingId", "take", "success", "order", "sortBy", "status", "startTime"]
    assert documented["bookingId"].type == {"type": "integer", "minimum": 1}
    assert documented["bookingId"].description == "Only this booking's."
    assert documented["take"].type == {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}
    assert documented["success"].type == {"type": "boolean"}
    assert documented["order"].type == {"type": "string", "enum": ["asc", "desc"], "default": "asc"}
    assert documented["sortBy"].type == {"type": "string", "enum": ["createdAt"]}
    assert documented["status"].type == {"type": "array", "items": {"type": "string", "enum": ["ACCEPTED"]}}
    assert (documented["status"].explode, documented["status"].style) == (True, "form")
    assert documented["startTime"].required is True
    assert all(parameter.location == "query" for parameter in documented.values())


def list_views() -> list[tuple[str, type]]:
    """(canonical path, view class) of every resource list operation of the URL configuration."""
    views = []
    for path, _, method, callback in EndpointEnumerator().get_api_endpoints():
        view, actions = getattr(callback, "cls", None), getattr(callback, "actions", None) or {}
        if path.startswith("/v1/") and method == "GET" and actions.get("get") == "list":
            if issubclass(view, ResourceViewSet) and view.schema is not None:
                views.append((path, view))
    return views


def test_every_declared_list_is_found():
    declared = {view.__name__ for _, view in list_views() if getattr(view, "list_filters", None)}

    assert declared >= {
        "BookingViewSet",
        "EventTypeViewSet",
        "MembershipViewSet",
        "PaymentViewSet",
        "SlotViewSet",
        "WebhookDeliveryViewSet",
    }


def test_the_document_lists_exactly_the_declared_parameters_of_each_list():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    for path, view in list_views():
        declared = {to_camel(name): kind for name, kind in view.list_filters.declared.items()}
        pagination = view.pagination_class
        paginated = (
            ["page", "take", *pagination.after_query_params]
            if isinstance(pagination, type) and issubclass(pagination, PagePagination)
            else []
        )
        documented = {
            parameter["name"]: parameter
            for parameter in paths[path]["get"].get("parameters", [])
            if parameter["in"] == "query"
        }

        by_user = ["userId"] if view.filters_by_user else []
        assert sorted(documented) == sorted([*declared, *paginated, *by_user]), path
        for name, kind in declared.items():
            expected = kind.openapi_parameter(name).type
            assert documented[name]["schema"] == expected, (path, name)
            assert documented[name].get("required", False) == kind.required, (path, name)


# --- through the API: every declared parameter of every list -------------------------------------

# Valid values for the required parameters (GET /slots, /availability, /slots/why-not), so that the
# one under test is the bad one.
REQUIRED = {
    "eventTypeId": "1",
    "startTime": "2030-01-01",
    "endTime": "2030-01-02",
    "dateFrom": "2030-01-01",
    "dateTo": "2030-01-02",
    "start": "2030-01-01T09:00:00Z",
}


def declared_parameters():
    for path, view in list_views():
        declared = {to_camel(name): kind for name, kind in view.list_filters.declared.items()}
        required = {name: REQUIRED[name] for name, kind in declared.items() if kind.required}
        for name, kind in declared.items():
            others = {other: value for other, value in required.items() if other != name}
            yield pytest.param(path, name, kind, others, id=f"{path}?{name}")


@pytest.mark.django_db
@pytest.mark.parametrize("path,name,kind,required", list(declared_parameters()))
def test_every_declared_parameter_refuses_an_empty_value_and_a_second_copy(client, path, name, kind, required):
    user = UserFactory()
    headers = auth(user)
    path = path.format(webhook_id=WebhookFactory(user=user).pk, user_id=user.pk, team_id=TeamFactory().pk)

    empty = client.get(path, {**required, name: ""}, **headers)
    if isinstance(kind, ListOf) and kind.comma_separated:  # an empty item is no item
        assert empty.status_code == 200, empty.content
    else:
        assert empty.status_code == 400, empty.content
        assert empty.json()["errors"] == {name: ["Must not be empty."]}

    if not isinstance(kind, ListOf):
        twice = client.get(path, {**required, name: ["x", "y"]}, **headers)
        assert twice.status_code == 400, twice.content
        assert twice.json()["errors"] == {name: ["Give this parameter once."]}
