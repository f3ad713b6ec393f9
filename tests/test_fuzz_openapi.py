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
from hypothesis.errors import Unsatisfiable
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


METHOD_ORDER = {"GET": 0, "POST": 1, "PATCH": 2, "PUT": 3, "DELETE": 4}


def _operations(document: dict) -> list[tuple[str, str]]:
    """(path, method) of every documented operation; reads before writes and deletes last, so that
    the caller's objects are still there for most operations."""
    operations = [
        (path, method.upper()) for path, item in document["paths"].items() for method in item if method in HTTP_METHODS
    ]
    return sorted(operations, key=lambda operation: (METHOD_ORDER[operation[1]], operation))


def _takes_input(operation: dict) -> bool:
    return bool(operation.get("parameters") or operation.get("requestBody"))


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


def _exercise(operation, mode, base_url, headers, checks, statuses):
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
        response = case.call(base_url=base_url, headers=headers, timeout=20)
        statuses.append(response.status_code)
        case.validate_response(response, checks=checks, headers=headers)

    exercise()


# One test per mode over every operation (not one per operation): a live-server test empties the
# database after it runs, and 80 of those cost more than the requests themselves. Every failing
# operation is reported, not only the first.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_generated_requests_get_documented_answers_and_no_server_error(live_server, caller, mode):
    document = requests.get(f"{live_server.url}/v1/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(document)
    headers = {"Authorization": f"Bearer {caller}"}
    checks = CHECKS if mode is GenerationMode.POSITIVE else [*CHECKS, negative_data_rejection]
    failures, exercised = {}, 0

    for path, method in _operations(document):
        statuses = []
        try:
            _exercise(schema[path][method], mode, live_server.url, headers, checks, statuses)
        except Unsatisfiable as error:
            # An operation that takes no input at all has nothing to make invalid.
            if mode is GenerationMode.NEGATIVE and not _takes_input(document["paths"][path][method.lower()]):
                exercised += 1
                continue
            failures[f"{method} {path}"] = str(error)[:2000]
        except Exception as error:  # noqa: BLE001 - collected, reported together below
            failures[f"{method} {path}"] = str(error)[:2000]
        exercised += bool(statuses)
        if any(status >= 500 for status in statuses):
            failures.setdefault(f"{method} {path}", f"server errors: {statuses}")

    assert not failures, "\n\n".join(f"{operation}:\n{error}" for operation, error in failures.items())
    assert exercised == len(_operations(document)), "an operation got no generated request"
