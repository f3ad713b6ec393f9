"""What the in-process benchmarks (`make bench-admin`, `make bench-scale`) share: databases made
afresh on the server of a URL, switching the connection between them, and timing a request
through Django's test client (the application's and the database's time, without a network or a
server's queue)."""

import statistics
import time
from urllib.parse import urlsplit

import psycopg
from django.db import connection
from django.test import Client


def use_database(name: str) -> None:
    connection.close()
    connection.settings_dict["NAME"] = name


def _maintenance(database_url: str) -> str:
    return urlsplit(database_url)._replace(path="/postgres").geturl()


def recreate(database_url: str, names: list[str]) -> None:
    """Drop and create each of `names` on the server of `database_url`."""
    with psycopg.connect(_maintenance(database_url), autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')


def exists(database_url: str, name: str) -> bool:
    with psycopg.connect(_maintenance(database_url)) as admin:
        return admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def median_ms(run, runs: int) -> float:
    """Median milliseconds of `run()` over `runs` calls after one warm-up."""
    run()
    durations = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        durations.append((time.perf_counter() - started) * 1000)
    return statistics.median(durations)


def timed(client: Client, path: str, runs: int) -> tuple[float, int, int]:
    """Median milliseconds of `runs` requests after one warm-up, the status and the body's size."""
    responses = []
    milliseconds = median_ms(lambda: responses.append(client.get(path)), runs)
    return milliseconds, responses[-1].status_code, len(responses[-1].content)
