"""The production entry point loads the whole URLconf and freezes what it loaded (config/wsgi.py)."""

import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]

PROBE = """
import gc, sys
import config.wsgi
print(gc.get_freeze_count(), "scheduling.views.schedules" in sys.modules, callable(config.wsgi.application))
"""


def test_wsgi_module_loads_the_urlconf_then_freezes_it():
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    frozen, views_loaded, callable_app = result.stdout.split()
    assert int(frozen) > 50_000
    assert views_loaded == "True"
    assert callable_app == "True"
