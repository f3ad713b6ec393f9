"""Assertions about what the database itself refuses."""

from contextlib import contextmanager

import pytest
from django.db import IntegrityError, transaction


@contextmanager
def refused_by(constraint: str):
    """The block must fail with an IntegrityError raised by exactly this database constraint."""
    with pytest.raises(IntegrityError) as excinfo, transaction.atomic():
        yield
    assert excinfo.value.__cause__.diag.constraint_name == constraint
