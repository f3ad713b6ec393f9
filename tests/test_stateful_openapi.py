"""Schemathesis on stateful flows: it follows the document's OpenAPI links from a create to the
object it made (get it, update it, cancel or delete it) and checks every answer of the flow for a
documented status, content type and schema, and no server error.

The flows are the bookings' (create, get, update, reschedule, cancel). Bookings only succeed in a
free slot, which a generator does not find by chance: before each `POST /v1/bookings` the test puts
the next free slot of the caller's event type in the body (the rest of the flow is generated), so
that successful bookings, and what follows them, are checked.
Bounded for `make test` (STATEFUL_EXAMPLES, default 10 flows of up to 5 steps), derandomized: the
flows depend on the document, so the default leaves room above the fewest that follow a link to a
created booking with today's document (8 before the booking body took `hashedLink` and
`reservedSlotUid`).
"""

import os
from datetime import date, timedelta

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory

EXAMPLES = int(os.environ.get("STATEFUL_EXAMPLES", "10"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _free_slots(base_url: str, headers: dict, event_type_id: int) -> list[str]:
    start = date.today() + timedelta(days=7)
    query = {
        "eventTypeId": event_type_id,
        "startTime": start.isoformat(),
        "endTime": (start + timedelta(days=14)).isoformat(),
        "timeZone": "Europe/Berlin",
    }
    response = requests.get(f"{base_url}/v1/slots", params=query, headers=headers, timeout=20)
    assert response.status_code == 200, response.text
    slots = response.json()["slots"]
    return [slot["time"] for day in sorted(slots) for slot in slots[day]]


@pytest.mark.django_db(transaction=True)
def test_flows_along_the_documents_links_get_documented_answers(live_server, settings):
    settings.RATE_LIMIT_PER_MINUTE = 1_000_000  # not testing the rate limit here
    user = UserFactory()
    event_type = EventTypeFactory(owner=user)
    headers = {"Authorization": f"Bearer {ApiKeyFactory(user=user).raw_key}"}
    base_url = live_server.url
    free = _free_slots(base_url, headers, event_type.pk)
    assert free
    document = requests.get(f"{base_url}/v1/openapi.json", timeout=20).json()
    assert document["paths"]["/v1/bookings"]["post"]["responses"]["200"]["links"]
    # The list is left out: it is no link target, and its many generated queries crowd out the
    # create whose links the flows are to follow.
    schema = (
        schemathesis.openapi.from_dict(document)
        .include(path_regex=r"^/v1/bookings")
        .exclude(method="GET", path="/v1/bookings")
    )
    seen = []

    class Flows(schema.as_state_machine()):
        def before_call(self, case):
            if case.method == "POST" and case.path == "/v1/bookings":
                case.body = {
                    "eventTypeId": event_type.pk,
                    "start": free.pop(0) if free else "2000-01-03T09:00:00Z",
                    "timeZone": "Europe/London",
                    "name": "Ada Lovelace",
                    "email": "ada@example.org",
                }

        def get_call_kwargs(self, case):
            return {"base_url": base_url, "headers": headers, "timeout": 20}

        def after_call(self, response, case):
            seen.append((case.method, case.path, response.status_code))

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, headers=headers)

    Flows.run(
        settings=hypothesis_settings(
            max_examples=EXAMPLES,
            stateful_step_count=5,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
    )

    assert ("POST", "/v1/bookings", 200) in seen, seen
    followed = {(method, path) for method, path, status in seen if status == 200 and "{id}" in path}
    assert followed, seen  # at least one link was followed to a created object
