"""The layers point downwards: `core` is what every app builds on and imports none of them; webhooks
(the outbox) is below scheduling and payments, which write into it, and learns about bookings
through `webhooks.sources`; payments is below scheduling, whose booking creation writes a payment,
and builds its BOOKING_PAID payload through `webhooks.sources` too. Checked over the source, so that
a function-level import counts too."""

import ast
from pathlib import Path

import pytest
from django.conf import settings

APPS = {
    "accounts",
    "holds",
    "scheduling",
    "payments",
    "webhooks",
    "notifications",
    "calendars",
    "calv2",
    "integrations",
    "private_links",
    "demo",
    "devserver",
    "observability",
}
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
        ("accounts", {"holds", "scheduling", "payments", "webhooks", "calv2", "integrations", "private_links"} | TOP),
        # Held time (slot reservations, out of office): below scheduling, whose slots read it.
        ("holds", {"scheduling", "payments", "calv2", "integrations", "private_links"} | TOP),
        (
            "webhooks",
            {"holds", "scheduling", "payments", "notifications", "calv2", "integrations", "private_links"} | TOP,
        ),
        ("notifications", {"scheduling", "payments", "webhooks", "calv2", "integrations", "private_links"} | TOP),
        ("payments", {"scheduling", "calv2", "integrations", "private_links"} | TOP),
        ("scheduling", {"calv2", "integrations", "private_links"} | TOP),
        # An event type's private links: over scheduling's event types, below the v2 views.
        ("private_links", {"calv2", "integrations"} | TOP),
        ("calv2", {"integrations"} | TOP),
        # Cal.com's automation apps (Make, Zapier) over the services below; nothing imports them.
        ("integrations", {"calv2"} | TOP),
        # The settings find `make run`'s database through config/local_database.py, not the runner.
        ("config", {"devserver"}),
        # Observability watches the others from above webhooks (its metrics read the outbox) and is
        # imported by nothing but the settings and URLs.
        ("observability", {"scheduling", "payments", "calv2", "integrations", "private_links"} | TOP),
        # Connected calendars sit below scheduling (whose slots read their busy time) and learn
        # about bookings through `calendars.sources`.
        (
            "calendars",
            {"holds", "scheduling", "payments", "webhooks", "notifications", "calv2", "integrations", "private_links"}
            | TOP,
        ),
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


def test_generated_code_lives_in_the_speed_machinerys_room():
    """`exec` (code written at run time) is the speed machinery's alone: core/fastpath/, whose
    package docstring lists each piece and `FAST_PATHS=0` turns off."""
    root = Path(settings.BASE_DIR)
    offending = sorted(
        str(path.relative_to(root))
        for package in ("core", *APPS, "config")
        for path in (root / package).rglob("*.py")
        if "tests" not in path.relative_to(root).parts and "fastpath" not in path.relative_to(root).parts
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "exec"
    )
    assert offending == []
