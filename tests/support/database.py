"""Assertions about what the database itself refuses, and a second session beside the test's."""

from contextlib import contextmanager

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction


def another_session(**options) -> psycopg.Connection:
    """A psycopg connection of its own to the test database (another request, another worker)."""
    settings = connection.settings_dict
    return psycopg.connect(
        dbname=settings["NAME"],
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        user=settings["USER"] or None,
        password=settings["PASSWORD"] or None,
        **options,
    )


@contextmanager
def refused_by(constraint: str):
    """The block must fail with an IntegrityError raised by exactly this database constraint."""
    with pytest.raises(IntegrityError) as excinfo, transaction.atomic():
        yield
    assert excinfo.value.__cause__.diag.constraint_name == constraint
