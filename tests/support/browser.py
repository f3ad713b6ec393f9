"""Headless Chromium for the tests of pages a person clicks (Debian's chromium + chromium-driver)."""

import tempfile
from contextlib import contextmanager

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMEDRIVER = "/usr/bin/chromedriver"
ARGUMENTS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


@contextmanager
def headless_chromium(*extra_arguments: str):
    """A fresh browser with its own empty profile, quit and removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile_dir:
        options = webdriver.ChromeOptions()
        for argument in (*ARGUMENTS, f"--user-data-dir={profile_dir}", *extra_arguments):
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        driver.set_page_load_timeout(30)
        try:
            yield driver
        finally:
            driver.quit()
