"""The production entry point (config/wsgi.py) and server settings (config/gunicorn.conf.py)."""

import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[1]

PROBE = """
import gc, sys
import config.wsgi
print(gc.get_freeze_count(), "scheduling.views.schedules" in sys.modules, callable(config.wsgi.application))
"""


def _run(*command: str) -> str:
    return subprocess.run(
        command,
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def test_wsgi_module_loads_the_urlconf_then_freezes_it():
    frozen, views_loaded, callable_app = _run(sys.executable, "-c", PROBE).split()
    assert int(frozen) > 50_000
    assert views_loaded == "True"
    assert callable_app == "True"


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
