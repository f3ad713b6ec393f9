"""Every v2 answer of these tests is checked against the v2 document; the v2 caller and owner."""

import pytest  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from accounts.tests.factories import UserFactory  # noqa: E402
from calv2.tests import documented  # noqa: E402
from calv2.tests.helpers import V2Client  # noqa: E402


@pytest.fixture(autouse=True)
def every_v2_answer_is_documented(monkeypatch):
    """Each answer to a /v2/ request in these tests is checked against the v2 document."""
    original = APIClient.generic

    def generic(self, method, path, *args, **kwargs):
        response = original(self, method, path, *args, **kwargs)
        route = path.split("?", 1)[0]
        if route.startswith("/v2/"):
            documented.check(method, route, response)
        return response

    monkeypatch.setattr(APIClient, "generic", generic)


@pytest.fixture
def owner():
    return UserFactory(name="Grace Hopper", username="grace")


@pytest.fixture
def v2(api_client, owner):
    return V2Client(api_client, owner)
