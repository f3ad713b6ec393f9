"""The database itself refuses apps that break the model's rules."""

from contextlib import contextmanager

import pytest
from django.db import IntegrityError, transaction

from core.models import App
from core.tests.factories import AppFactory

pytestmark = pytest.mark.django_db


@contextmanager
def refused_by(constraint: str):
    """The block must fail with an IntegrityError raised by exactly this database constraint."""
    with pytest.raises(IntegrityError) as excinfo, transaction.atomic():
        yield
    assert excinfo.value.__cause__.diag.constraint_name == constraint


def test_two_apps_cannot_share_a_slug():
    AppFactory(slug="stripe")

    with refused_by("core_app_pkey"):
        AppFactory.build(slug="stripe", name="Another Stripe").save(force_insert=True)

    assert App.objects.get(slug="stripe").name == "Stripe"
