"""The database itself refuses apps that break the model's rules."""

import pytest

from core.models import App
from core.tests.factories import AppFactory
from tests.support.database import refused_by

pytestmark = pytest.mark.django_db


def test_two_apps_cannot_share_a_slug():
    AppFactory(slug="stripe")

    with refused_by("core_app_pkey"):
        AppFactory.build(slug="stripe", name="Another Stripe").save(force_insert=True)

    assert App.objects.get(slug="stripe").name == "Stripe"
