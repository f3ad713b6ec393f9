"""Schemathesis over the live app: every operation of the OpenAPI document gets a fixed,
deterministic number of generated requests with a valid API key, both valid ones (positive) and
ones that break the document (negative: wrong types, missing or extra fields, out-of-range
numbers); no response may be a 5xx, every response must match the document (status code, content
type, headers, body), and a request that breaks the document must be refused.

Bounded for `make test`: FUZZ_EXAMPLES (default 6) per operation and mode, derandomized (the same
requests on every run), no example database. `make fuzz` runs the same test with more examples.
"""

import os

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.tests.factories import ApiKeyFactory, MembershipFactory, UserFactory
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
HTTP_METHODS = {"get", "post", "patch", "put", "delete"}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def _operations() -> list[tuple[str, str]]:
    """(path, method) of every documented operation, read from the generator at collection time."""
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(
        (path, method.upper()) for path, item in document["paths"].items() for method in item if method in HTTP_METHODS
    )


@pytest.fixture
def caller(settings):
    settings.RATE_LIMIT_PER_MINUTE = 1_000_000  # the fuzzer is not testing the rate limit
    user = UserFactory()
    schedule = ScheduleFactory(user=user)
    event_type = EventTypeFactory(owner=user, schedule=schedule)
    booking = BookingFactory(organizer=user, event_type=event_type)
    PaymentFactory(booking=booking)
    MembershipFactory(user=user, role="OWNER")
    return ApiKeyFactory(user=user).raw_key


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("path,method", _operations())
def test_generated_requests_get_documented_answers_and_no_server_error(live_server, caller, path, method, mode):
    document = requests.get(f"{live_server.url}/v1/openapi.json", timeout=10).json()
    operation = schemathesis.openapi.from_dict(document)[path][method]
    headers = {"Authorization": f"Bearer {caller}"}
    statuses = []
    checks = CHECKS if mode is GenerationMode.POSITIVE else [*CHECKS, negative_data_rejection]

    @hypothesis_settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def exercise(case):
        response = case.call(base_url=live_server.url, headers=headers, timeout=20)
        statuses.append(response.status_code)
        case.validate_response(response, checks=checks, headers=headers)

    exercise()
    assert statuses, "no request was generated"
    assert all(status < 500 for status in statuses)
