"""The locks (requirements.txt, requirements-dev.txt) are what `make lock` makes of the declarations
(requirements.in, requirements-dev.in), and nothing else.

Checked without the network, against the metadata of the packages installed here (`make test`
installs requirements-dev.txt, a superset of requirements.txt): every declared requirement is pinned
at a version it accepts; walking the declared requirements with their extras through each package's
own dependencies reaches exactly the pinned packages (nothing missing, nothing hand-kept); the dev
lock pins the runtime packages identically; every pin carries hashes; no lock names an index.
A lock that fails here is regenerated with `make lock`.
"""

import re
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCKS = {"requirements.txt": "requirements.in", "requirements-dev.txt": "requirements-dev.in"}
FIX = "Run `make lock` (and commit both locks)."


def lock_entries(lock: Path) -> dict[str, dict]:
    """name -> {"version", "marker", "hashes"} of every pin, joined across continuation lines."""
    entries, current = {}, None
    for line in lock.read_text().splitlines():
        stripped = line.strip().rstrip("\\").strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("--hash="):
            current["hashes"].append(stripped.removeprefix("--hash="))
            continue
        requirement = Requirement(stripped)
        current = {
            "line": stripped,
            "version": str(requirement.specifier).removeprefix("=="),
            "marker": requirement.marker,
            "hashes": [],
        }
        entries[canonicalize_name(requirement.name)] = current
    return entries


def applies(entry: dict) -> bool:
    return entry["marker"] is None or entry["marker"].evaluate()


def declared(path: Path) -> list[Requirement]:
    """The requirements a .in file declares, following `-r` includes (not `-c` constraints)."""
    requirements = []
    for line in path.read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or line.startswith("-c "):
            continue
        if line.startswith("-r "):
            requirements += declared(path.parent / line.removeprefix("-r ").strip())
            continue
        requirements.append(Requirement(line))
    return requirements


def reached_from(roots: list[Requirement]) -> set[str]:
    """Every package the declared requirements need here, through each installed package's own
    Requires-Dist, with the extras asked for on the way."""
    environment = default_environment()
    reached: dict[str, set[str]] = {}
    pending = [(root, set(root.extras)) for root in roots if root.marker is None or root.marker.evaluate(environment)]
    while pending:
        requirement, extras = pending.pop()
        name = canonicalize_name(requirement.name)
        known = reached.get(name)
        if known is not None and extras <= known:
            continue
        reached[name] = (known or set()) | extras
        try:
            metadata = distribution(name)
        except PackageNotFoundError:
            continue  # reported by the caller as not installed
        for text in metadata.requires or []:
            dependency = Requirement(text)
            wanted = any(
                dependency.marker is None or dependency.marker.evaluate(environment | {"extra": extra})
                for extra in ({""} | reached[name])
            )
            if wanted:
                pending.append((dependency, set(dependency.extras)))
    return set(reached)


@pytest.mark.parametrize("lock_name", LOCKS)
def test_every_declared_requirement_is_pinned_at_a_version_it_accepts(lock_name):
    entries = lock_entries(ROOT / lock_name)
    problems = []
    for requirement in declared(ROOT / LOCKS[lock_name]):
        entry = entries.get(canonicalize_name(requirement.name))
        if entry is None:
            problems.append(f"{requirement} is declared but not pinned")
        elif entry["version"] not in requirement.specifier:
            problems.append(f"{requirement} is declared but {entry['line']} is pinned")
    assert not problems, f"{lock_name} is stale against {LOCKS[lock_name]}:\n" + "\n".join(problems) + "\n" + FIX


@pytest.mark.parametrize("lock_name", LOCKS)
def test_the_lock_holds_exactly_what_the_declarations_need(lock_name):
    entries = lock_entries(ROOT / lock_name)
    pinned = {name for name, entry in entries.items() if applies(entry)}
    reached = reached_from(declared(ROOT / LOCKS[lock_name]))
    not_installed = []
    for name in sorted(pinned):
        try:
            installed = distribution(name).version
        except PackageNotFoundError:
            installed = None
        if installed != entries[name]["version"]:
            not_installed.append(f"{name}: pinned {entries[name]['version']}, installed {installed}")
    assert not not_installed, "run `make venv-dev` first; this environment is not the lock:\n" + "\n".join(
        not_installed
    )
    assert not reached - pinned, f"{lock_name} lacks what its declarations need: {sorted(reached - pinned)}. {FIX}"
    assert not pinned - reached, f"{lock_name} pins what nothing declared needs: {sorted(pinned - reached)}. {FIX}"


def test_the_dev_lock_pins_every_runtime_package_identically():
    runtime = lock_entries(ROOT / "requirements.txt")
    dev = lock_entries(ROOT / "requirements-dev.txt")
    different = [
        f"{name}: {entry['line']} vs {dev[name]['line'] if name in dev else 'missing'}"
        for name, entry in runtime.items()
        if name not in dev
        or dev[name]["version"] != entry["version"]
        or set(dev[name]["hashes"]) != set(entry["hashes"])
    ]
    assert not different, "requirements-dev.txt must install requirements.txt unchanged:\n" + "\n".join(different)


@pytest.mark.parametrize("lock_name", LOCKS)
def test_the_lock_is_generated_hashed_and_names_no_index(lock_name):
    text = (ROOT / lock_name).read_text()
    assert text.startswith("# This file was autogenerated by uv via the following command:\n#    make lock\n"), FIX
    assert not re.search(r"^\s*(-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host)\b", text, re.M)
    assert "file:" not in text
    unhashed = [name for name, entry in lock_entries(ROOT / lock_name).items() if not entry["hashes"]]
    assert not unhashed, f"pins without hashes in {lock_name}: {unhashed}. {FIX}"


def test_the_stale_check_sees_a_missing_pin_and_a_hand_kept_one(tmp_path):
    """The checks above, fed a copy of requirements.txt with `packaging` (needed by kombu's Redis
    transport through `celery[redis]`) removed and a pin that nothing needs added, see both."""
    text = (ROOT / "requirements.txt").read_text()
    without_packaging = re.sub(r"^packaging==.*?(?=^\S)", "", text, flags=re.M | re.S)
    assert without_packaging != text
    stale = tmp_path / "requirements.txt"
    stale.write_text(without_packaging + "pytest==" + distribution("pytest").version + " \\\n    --hash=sha256:00\n")
    pinned = {name for name, entry in lock_entries(stale).items() if applies(entry)}
    reached = reached_from(declared(ROOT / "requirements.in"))
    assert reached - pinned == {"packaging"}
    assert pinned - reached == {"pytest"}
