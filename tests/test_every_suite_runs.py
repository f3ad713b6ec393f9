"""`make test` runs pytest's `testpaths`: an app whose tests are not listed there is never tested,
however green its own runs were."""

import configparser
from pathlib import Path

from django.conf import settings


def test_every_folder_with_tests_is_in_testpaths():
    root = Path(settings.BASE_DIR)
    config = configparser.ConfigParser()
    config.read(root / "pytest.ini")
    listed = set(config["pytest"]["testpaths"].split())
    with_tests = {path.parent.name for path in root.glob("*/tests") if any(path.glob("test_*.py"))}
    with_tests |= {"tests"} if any((root / "tests").glob("test_*.py")) else set()
    assert with_tests - listed == set()
