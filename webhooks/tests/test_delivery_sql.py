"""The delivery hot path's hand-written statements take every table and column name from the models:
renamed in `_meta`, the names change in the SQL, and none is written literally."""

import re

import pytest

from webhooks import delivery_sql
from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery

MODELS = (WebhookDelivery, Webhook, DeliveryAttempt)
ALIASES = {"delivery", "webhook"}  # the claim's names for its two tables, quoted in its RETURNING list
STATEMENTS = (delivery_sql.claim_sql, delivery_sql.record_success_sql)


def names_in_the_database() -> set[str]:
    return {model._meta.db_table for model in MODELS} | {
        field.column for model in MODELS for field in model._meta.concrete_fields
    }


@pytest.fixture
def renamed(monkeypatch) -> set[str]:
    """Every table and column of the three models renamed; the original names."""
    original = names_in_the_database()
    for model in MODELS:
        monkeypatch.setattr(model._meta, "db_table", f"renamed_{model._meta.db_table}")
        for field in model._meta.concrete_fields:
            monkeypatch.setattr(field, "column", f"renamed_{field.column}")
    return original


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda statement: statement.__name__)
def test_every_name_in_the_statement_follows_the_models(renamed, statement):
    sql = statement()
    quoted = set(re.findall(r'"([^"]+)"', sql))
    bare_words = set(re.findall(r"\w+", re.sub(r'"[^"]*"|%\(\w+\)s', " ", sql)))

    assert quoted - ALIASES and quoted - ALIASES <= names_in_the_database()
    assert bare_words & renamed == set()


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda statement: statement.__name__)
def test_the_module_runs_the_statements_written_from_the_current_models(statement):
    assert getattr(delivery_sql, statement.__name__.upper()) == statement()
