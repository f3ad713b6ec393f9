"""The production entry point (config/wsgi.py) and server settings (config/gunicorn.conf.py)."""

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

BASE_DIR = Path(__file__).resolve().parents[1]

PROBE = """
import gc, sys
import config.wsgi
print(gc.get_freeze_count(), "scheduling.views.schedules" in sys.modules, callable(config.wsgi.application))
print(*gc.get_threshold())
"""


def _run(*command: str, **env: str) -> str:
    return subprocess.run(
        command,
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def test_wsgi_module_loads_the_urlconf_then_freezes_it():
    loaded, thresholds = _run(sys.executable, "-c", PROBE).splitlines()
    frozen, views_loaded, callable_app = loaded.split()
    assert int(frozen) > 50_000
    assert views_loaded == "True"
    assert callable_app == "True"
    assert thresholds.split() == ["10000", "10", "10"]  # the first generation's, Python's other two


def test_wsgi_module_takes_the_collector_threshold_from_the_environment():
    _loaded, thresholds = _run(sys.executable, "-c", PROBE, GC_GEN0_THRESHOLD="2500").splitlines()
    assert thresholds.split() == ["2500", "10", "10"]


def test_gunicorn_config_keeps_the_worker_heartbeat_in_memory():
    output = _run(
        str(Path(sys.executable).parent / "gunicorn"),
        "--print-config",
        "--config",
        str(BASE_DIR / "config" / "gunicorn.conf.py"),
        "config.wsgi",
    )
    settings = {}
    for line in output.splitlines():
        name, separator, value = line.partition(" = ")
        if separator:
            settings[name.strip()] = value.strip()
    assert settings["worker_tmp_dir"] == "/dev/shm"


JIT_PROBE = """
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SHOW jit")
    print(cursor.fetchone()[0])
"""


def _jit_with(**environment: str) -> str:
    """`SHOW jit` in a session opened by the production settings, on the test server's maintenance
    database (which exists on any server)."""
    server = urlsplit(os.environ["DATABASE_URL"])._replace(path="/postgres").geturl()
    return subprocess.run(
        [sys.executable, "-c", JIT_PROBE],
        cwd=BASE_DIR,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "probe",
            "DATABASE_URL": server,
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()


def test_the_services_sessions_run_without_postgresqls_jit_unless_told_to_leave_it_to_the_server():
    """JIT compiled a 2-ms list for 174 ms at ten million bookings (docs/benchmarks.md)."""
    assert _jit_with() == "off"
    assert _jit_with(DB_SESSION_JIT_OFF="false") == "on"  # the server's default, as this test server has it
