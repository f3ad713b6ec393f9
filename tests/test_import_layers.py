"""The layers point downwards: `core` is what every app builds on and imports none of them; webhooks
(the outbox) is below scheduling and payments, which write into it, and learns about bookings
through `webhooks.sources`; payments is below scheduling, whose booking creation writes a payment,
and builds its BOOKING_PAID payload through `webhooks.sources` too. Checked over the source, so that
a function-level import counts too."""

import ast
from pathlib import Path

import pytest
from django.conf import settings

APPS = {"accounts", "scheduling", "payments", "webhooks", "calendars", "calv2", "demo", "devserver"}
# `config` (settings, URLs, the Celery app) and the runners at the top (`demo`, `devserver`) wire
# the project together; nothing below them imports them. Code that needs the Celery app reads it
# through `celery.current_app`.
TOP = {"config", "demo", "devserver"}


def imported_modules(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("core", APPS | TOP),
        ("accounts", {"scheduling", "payments", "webhooks", "calv2"} | TOP),
        ("webhooks", {"scheduling", "payments", "calendars", "calv2"} | TOP),
        # Connected calendars sit below scheduling (whose slots read their busy time) and learn
        # about bookings through `calendars.sources`.
        ("calendars", {"scheduling", "payments", "webhooks", "calv2"} | TOP),
        ("payments", {"scheduling", "calv2"} | TOP),
        ("scheduling", {"calv2"} | TOP),
        ("calv2", TOP),
    ],
)
def test_a_layer_imports_nothing_above_it(package, forbidden):
    root = Path(settings.BASE_DIR) / package
    offending = sorted(
        f"{path.relative_to(root.parent)}: {module}"
        for path in root.rglob("*.py")
        if not {"tests", "migrations"} & set(path.relative_to(root).parts)
        for module in imported_modules(path)
        if module.split(".")[0] in forbidden
    )
    assert offending == []
