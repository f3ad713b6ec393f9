"""`make run` installs only requirements.txt: every third-party module that the service's own code
imports (tests and benchmarks aside) must come from a distribution pinned there, or the first
`make run` on a fresh machine fails at start-up while the suite (with the dev requirements) passes."""

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCAL = {path.name for path in ROOT.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
# The smoke run (`smoke/`) is test tooling run from the dev virtualenv; the part of it that runs in
# the runtime virtualenv (smoke/imports.py) imports only what the service does.
SKIPPED_PARTS = {"tests", "benchmarks", "smoke", ".venv", "migrations"}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pinned(path: Path) -> set[str]:
    lines = path.read_text().splitlines()
    return {_normalise(line.split("==")[0]) for line in lines if "==" in line and not line.startswith("#")}


def _imported_top_level_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        if SKIPPED_PARTS & set(path.relative_to(ROOT).parts) or path.name == "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                modules.setdefault(name.split(".")[0], path)
    return modules


def test_every_module_the_service_imports_is_pinned_in_requirements_txt():
    pinned = _pinned(ROOT / "requirements.txt")
    distributions = packages_distributions()
    missing = []
    for module, path in sorted(_imported_top_level_modules().items()):
        if module in sys.stdlib_module_names or module in LOCAL or module in ("config", "manage"):
            continue
        provided_by = {_normalise(name) for name in distributions.get(module, [])}
        if not provided_by & pinned:
            missing.append(f"{module} (imported by {path.relative_to(ROOT)}; from {sorted(provided_by) or '?'})")
    assert not missing, "not in requirements.txt:\n" + "\n".join(missing)
