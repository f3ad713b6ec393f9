"""`make smoke` drops and creates SMOKE_DATABASE_URL's database: a URL whose database name does not
say `smoke` is refused before anything is built, started or dropped."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]


def database_names(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as connection:
        return {row[0] for row in connection.execute("SELECT datname FROM pg_database")}


def test_a_database_name_without_smoke_is_refused_and_nothing_changes(tmp_path):
    server = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/scheduling").rsplit("/", 1)[0]
    before = database_names(server + "/postgres")
    result = subprocess.run(
        [sys.executable, "-m", "smoke"],
        cwd=ROOT,
        env=os.environ
        | {
            "SMOKE_DATABASE_URL": server + "/postgres",
            "SMOKE_CACHE_DIR": str(tmp_path / "cache"),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "SMOKE_DATABASE_URL names 'postgres': it is dropped and created, so its name must contain 'smoke'" in (
        result.stderr
    )
    assert database_names(server + "/postgres") == before
    assert not (tmp_path / "cache").exists()
