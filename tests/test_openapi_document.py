"""The OpenAPI document (docs/api.md): served, valid, truthful about real responses, and its
docs page works offline."""

import json
import re

import pytest
import requests
import schemathesis
import yaml
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from openapi_spec_validator import validate
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, MembershipFactory, UserFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.browser import headless_chromium

pytestmark = pytest.mark.django_db


def test_json_and_yaml_documents_are_served_without_credentials(client):
    response = client.get("/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.")
    yaml_response = client.get("/v1/openapi.yaml")
    assert yaml_response.status_code == 200
    assert yaml.safe_load(yaml_response.content)["paths"].keys() == document["paths"].keys()


def test_repeated_builds_in_one_process_are_identical_and_valid():
    builds = [
        json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
        for _ in range(4)
    ]
    for document in builds:
        validate(document)
        # Every $ref names a component that this build emits (a rewritten constant once did not).
        components = document["components"]["schemas"]
        references = set(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(document)))
        assert references <= components.keys(), references - components.keys()
    assert all(document == builds[0] for document in builds[1:])


def test_every_fetch_of_the_served_documents_is_valid(client):
    documents = [client.get("/v1/openapi.json").json() for _ in range(3)]
    documents += [yaml.safe_load(client.get("/v1/openapi.yaml").content) for _ in range(2)]
    for document in documents:
        validate(document)
    assert all(document == documents[0] for document in documents[1:])
    yaml_text = client.get("/v1/openapi.yaml").content.decode()
    assert "&id" not in yaml_text and "*id" not in yaml_text  # no YAML anchors: nothing shared


def test_create_answers_are_documented_as_200_and_unpaid_bookings_omit_payment_keys(client):
    document = client.get("/v1/openapi.json").json()
    for path, item in document["paths"].items():
        if path.startswith("/api/integrations/"):
            continue  # the automation apps' REST hooks answer with the statuses of Cal.com's apps
        for method, operation in item.items():
            assert "201" not in operation.get("responses", {}), f"{method.upper()} {path} documents 201"
    booking_created = document["components"]["schemas"]["BookingCreated"]
    assert {"paymentUid", "paymentId"} <= booking_created["properties"].keys()
    assert not {"paymentUid", "paymentId"} & set(booking_created["required"])
    assert {"id", "uid", "payment", "paymentRequired"} <= set(booking_created["required"])


def test_document_lists_every_resource_once_at_its_canonical_path(client):
    paths = client.get("/v1/openapi.json").json()["paths"]
    for resource in ("schedules", "teams", "memberships", "payments", "me"):
        assert f"/v1/{resource}" in paths
        assert f"/{resource}" not in paths
    assert "/v1/schedules/{id}" in paths
    assert "/v1/memberships/{id}" in paths


def test_document_describes_scopes_security_and_problem_errors(client):
    document = client.get("/v1/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert schemes["oauth2"]["type"] == "oauth2"
    assert "READ_SCHEDULE" in schemes["oauth2"]["flows"]["authorizationCode"]["scopes"]
    assert {key: schemes["apiKeyQuery"][key] for key in ("type", "in", "name")} == {
        "type": "apiKey",
        "in": "query",
        "name": "apiKey",
    }
    create = document["paths"]["/v1/schedules"]["post"]
    assert {"oauth2": ["WRITE_SCHEDULE"]} in create["security"]
    assert create["x-required-scope"] == "WRITE_SCHEDULE"
    assert set(create["responses"]) >= {"200", "400", "401", "403", "415", "429"}
    assert create["responses"]["400"]["content"]["application/problem+json"]["schema"] == {
        "$ref": "#/components/schemas/Problem"
    }
    assert "Location" in create["responses"]["200"]["headers"]
    assert document["paths"]["/v1/payments"].keys() == {"get"}
    assert "409" in document["paths"]["/v1/memberships/{id}"]["delete"]["responses"]
    request_body = document["components"]["schemas"]["ScheduleCreateRequest"]
    assert request_body["additionalProperties"] is False
    assert set(request_body["required"]) == {"name", "timeZone"}


def test_every_resource_operation_documents_the_outage_answer(client):
    document = client.get("/v1/openapi.json").json()
    operations = [
        (path, method, operation)
        for path, item in document["paths"].items()
        if path.startswith("/v1/") and path not in ("/v1/openapi.json", "/v1/openapi.yaml", "/v1/docs")
        for method, operation in item.items()
    ]
    assert operations
    for path, method, operation in operations:
        unavailable = operation["responses"].get("503")
        assert unavailable, f"{method.upper()} {path} does not document 503"
        assert "Retry-After" in unavailable["headers"]


# --- real responses against the document -------------------------------------------------------------


@pytest.fixture
def live_document(live_server):
    document = requests.get(f"{live_server.url}/v1/openapi.json", timeout=10).json()
    return schemathesis.openapi.from_dict(document)


def _call(live_server, method, path, raw_key, headers=None, **kwargs):
    headers = {"Authorization": f"Bearer {raw_key}", **(headers or {})}
    return requests.request(method, f"{live_server.url}{path}", headers=headers, timeout=10, **kwargs)


@pytest.mark.django_db(transaction=True)
def test_real_responses_conform_to_the_document(live_server, live_document):
    user = UserFactory()
    key = ApiKeyFactory(user=user).raw_key
    schedule = ScheduleFactory(user=user)
    EventTypeFactory(owner=user, schedule=schedule)
    membership = MembershipFactory(user=user, role="OWNER")
    payment = PaymentFactory(booking=BookingFactory(organizer=user))
    other_schedule = ScheduleFactory()

    calls = [
        ("GET", "/v1/schedules", "/v1/schedules", {}, 200),
        ("GET", "/v1/schedules/{id}", f"/v1/schedules/{schedule.pk}", {}, 200),
        ("GET", "/v1/schedules/{id}", f"/v1/schedules/{other_schedule.pk}", {}, 404),
        ("POST", "/v1/schedules", "/v1/schedules", {"json": {"name": "N", "timeZone": "UTC"}}, 200),
        ("POST", "/v1/schedules", "/v1/schedules", {"json": {"name": "N", "timeZone": "Nope/Nope"}}, 400),
        (
            "POST",
            "/v1/schedules",
            "/v1/schedules",
            {"data": "{nope", "headers": {"Content-Type": "application/json"}},
            400,
        ),
        ("PATCH", "/v1/schedules/{id}", f"/v1/schedules/{schedule.pk}", {"json": {"name": "M"}}, 200),
        ("GET", "/v1/schedules", "/v1/schedules?take=1000", {}, 400),
        ("GET", "/v1/teams", "/v1/teams", {}, 200),
        ("GET", "/v1/teams/{id}", f"/v1/teams/{membership.team_id}", {}, 200),
        ("GET", "/v1/memberships", "/v1/memberships", {}, 200),
        ("GET", "/v1/memberships/{id}", f"/v1/memberships/{user.pk}_{membership.team_id}", {}, 200),
        ("DELETE", "/v1/memberships/{id}", f"/v1/memberships/{user.pk}_{membership.team_id}", {}, 409),
        ("GET", "/v1/payments", "/v1/payments", {}, 200),
        ("GET", "/v1/payments/{id}", f"/v1/payments/{payment.pk}", {}, 200),
        ("GET", "/v1/me", "/v1/me", {}, 200),
        ("DELETE", "/v1/schedules/{id}", f"/v1/schedules/{schedule.pk}", {}, 200),
    ]
    for method, template, path, kwargs, status in calls:
        response = _call(live_server, method, path, key, **kwargs)
        assert response.status_code == status, (method, path, response.text)
        live_document[template][method].validate_response(response)

    # Errors before the view runs are documented too: no credentials, and a scope the token lacks.
    response = requests.get(f"{live_server.url}/v1/schedules", timeout=10)
    assert response.status_code == 401
    live_document["/v1/schedules"]["GET"].validate_response(response)
    token = AccessTokenFactory(user=user, scope="READ_PROFILE").raw_token
    response = _call(live_server, "GET", "/v1/payments", token)
    assert response.status_code == 403
    live_document["/v1/payments"]["GET"].validate_response(response)


# --- the docs page ---------------------------------------------------------------------------------------


def test_docs_page_uses_only_local_assets(client):
    response = client.get("/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower()
    assert "https://" not in html


@pytest.mark.django_db(transaction=True)
def test_docs_page_renders_the_operations_in_a_browser_without_internet(live_server):
    # Any request leaving 127.0.0.1 fails, so the page must work from local assets alone.
    offline = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"
    with headless_chromium(offline) as driver:
        driver.get(f"{live_server.url}/v1/docs")
        WebDriverWait(driver, 30).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "/v1/schedules" in text
        assert "/v1/memberships/{id}" in text


def test_document_is_json_serialisable_and_stable(client):
    first = client.get("/v1/openapi.json").content
    assert json.loads(first) == json.loads(client.get("/v1/openapi.json").content)
