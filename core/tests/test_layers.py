"""`core` is the layer every app builds on: it imports none of them (the apps depend on core, the
demo app on everything). Checked over the source, so that a function-level import counts too."""

import ast
from pathlib import Path

import core

APPS = {"accounts", "scheduling", "payments", "webhooks", "demo"}


def imported_modules(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_core_imports_no_app():
    root = Path(core.__file__).parent
    offending = sorted(
        f"{path.relative_to(root.parent)}: {module}"
        for path in root.rglob("*.py")
        if not {"tests", "migrations"} & set(path.relative_to(root).parts)
        for module in imported_modules(path)
        if module.split(".")[0] in APPS
    )
    assert offending == []
