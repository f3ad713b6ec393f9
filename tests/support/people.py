"""The people and things most API tests start from, as fixtures every app's tests use by name
(registered by the root conftest's `pytest_plugins`). A test module that needs other ones (a named
organizer, a longer event type) defines its own fixture of the same name, which takes precedence."""

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory


@pytest.fixture
def organizer():
    """A user (in Europe/Berlin, the factory's zone) who owns the event types and organises the bookings."""
    return UserFactory()


@pytest.fixture
def key(organizer):
    """The organizer's API key, as sent (`Authorization: Bearer <key>`, tests.support.credentials.bearer)."""
    return ApiKeyFactory(user=organizer).raw_key


@pytest.fixture
def event_type(organizer):
    """A 30-minute event type of the organizer's, on their default schedule."""
    return EventTypeFactory(owner=organizer, length=30)
