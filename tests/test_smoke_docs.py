"""The smoke run (`make smoke`) is the executable form of README's "Running in production": the
command lines it starts are the ones that section and docs/operations.md give, word for word."""

from pathlib import Path

import pytest

from smoke.__main__ import BEAT_COMMAND, CLIENT_COMMAND, MIGRATE_COMMAND, OPERATOR_COMMAND, WEB_COMMAND, WORKER_COMMAND

ROOT = Path(__file__).resolve().parents[1]


def production_section() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("## Running in production\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("command", [MIGRATE_COMMAND, WEB_COMMAND, WORKER_COMMAND, BEAT_COMMAND])
def test_readme_starts_the_processes_with_the_smoke_runs_command_lines(command):
    block = production_section().split("```sh\n", 1)[1].split("```", 1)[0]
    assert command in block.splitlines()


@pytest.mark.parametrize("command", [OPERATOR_COMMAND, CLIENT_COMMAND])
def test_readme_gives_the_operator_commands_the_smoke_run_uses(command):
    assert command in " ".join(production_section().split())


def test_operations_guide_describes_the_smoke_run_and_the_two_beats():
    guide = (ROOT / "docs" / "operations.md").read_text()
    assert "## The production smoke run (`make smoke`, part of `make test`)" in guide
    assert "### Two beats" in guide
    assert "**one sends, the others\nwait**" in guide
    assert "**nothing is sent twice**" in guide
