"""The docs and the code's own comments name only code that exists: a file path, a dotted Python
name or a function name that a reader looks up must be there. Checked over README.md, docs/*.md
and every module's docstrings and comments, so that a rename that forgets its prose fails here."""

import importlib
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest
from celery import current_app
from django.apps import apps
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PACKAGES = (
    *("core", "accounts", "holds", "scheduling", "payments", "webhooks", "notifications", "calv2", "integrations"),
    "calendars",
    *("demo", "devserver", "config", "benchmarks", "observability"),
)
TOP_LEVEL = (*PACKAGES, "tests", "templates", "docs", ".ci", "deploy")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = sorted(
    path
    for package in (*PACKAGES, "tests")
    for path in (ROOT / package).rglob("*.py")
    if "migrations" not in path.parts
)

# A path into the repository: `core/fastpath/rows.py`, `docs/api.md`, `webhooks/tests/`.
PATH = re.compile(r"(?<![\w/.-])((?:{})/[\w./-]*[\w/])".format("|".join(re.escape(name) for name in TOP_LEVEL)))
# A dotted name in one of the project's packages: `core.fastpath.read_rows`, `accounts.models.User`.
DOTTED = re.compile(r"^(?:{})(?:\.\w+)+$".format("|".join(PACKAGES)))
# A function name written as a call, or a snake_case name: `payment_list(...)`, `managed_team_ids`.
IDENTIFIER = re.compile(r"^([a-z_][a-z0-9]*_[a-z0-9_]+)(?:\(.*\))?$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FILE_NAME = re.compile(r"\.(md|py|html|txt|json|yaml|lua|png|ini|toml)$")
# snake_case names the docs take from PostgreSQL, Django and gunicorn rather than from this code.
OUTSIDE_NAMES = {
    *("max_connections", "btree_gist", "pg_terminate_backend"),
    *("to_attr", "update_or_create", "pre_request", "post_request"),
    "cal_com",  # Pipedream's name of the Cal.com app
    *("histogram_quantile", "parentbased_traceidratio"),  # PromQL's and OpenTelemetry's
}


@cache
def source_words() -> frozenset[str]:
    """Every word of the project's code and templates: a snake_case name in the docs must be one."""
    words = set()
    for path in [*SOURCES, *(ROOT / "templates").rglob("*.html"), ROOT / "Makefile"]:
        if path != Path(__file__):  # its own example of a stale name must not count
            words.update(re.findall(r"\w+", path.read_text()))
    words.update(model._meta.db_table for model in apps.get_models())
    return frozenset(words | OUTSIDE_NAMES)


def resolves(dotted: str) -> bool:
    """A module or an attribute of one, a model label (`accounts.User`), a Celery task's name
    (`webhooks.sweep`) or a migration (`scheduling.0002`)."""
    parts = dotted.split(".")
    if len(parts) == 2:
        app_label, name = parts
        if name[:4].isdigit():
            return any((ROOT / app_label / "migrations").glob(f"{name}*.py"))
        if dotted in current_app.tasks:
            return True
        try:
            apps.get_model(app_label, name)
            return True
        except LookupError:
            pass
    for split in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def path_exists(reference: str) -> bool:
    return (ROOT / reference.rstrip(".")).exists()


def problems_in_prose(text: str, *, spans: bool) -> list[str]:
    found = [f"no such file: {path}" for path in PATH.findall(text) if not path_exists(path)]
    if spans:
        for span in CODE_SPAN.findall(text):
            span = span.strip()
            if FILE_NAME.search(span):
                continue
            if DOTTED.match(span.removesuffix("()")) and not resolves(span.removesuffix("()")):
                found.append(f"no such Python name: {span}")
            elif (match := IDENTIFIER.match(span)) and match.group(1) not in source_words():
                found.append(f"no such name in the code: {span}")
    return found


def comments_and_docstrings(path: Path) -> str:
    text = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and token.string.startswith('"""')):
            text.append(token.string)
    return "\n".join(text)


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_a_document_names_only_code_that_exists(doc):
    assert problems_in_prose(doc.read_text(), spans=True) == []


def test_comments_and_docstrings_name_only_code_that_exists():
    problems = [
        f"{path.relative_to(ROOT)}: {problem}"
        for path in SOURCES
        for problem in problems_in_prose(comments_and_docstrings(path), spans=True)
    ]
    assert problems == []


def test_the_check_catches_a_stale_reference():
    stale = "See `core/gone.py`, `core.fastpath.no_such_function` and `payment_rows(user)`."
    assert problems_in_prose(stale, spans=True) == [
        "no such file: core/gone.py",
        "no such Python name: core.fastpath.no_such_function",
        "no such name in the code: payment_rows(user)",
    ]
