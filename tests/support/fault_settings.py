"""The test settings plus the Idempotency-Key fault hook (tests.support.faults), for the crash tests'
server process."""

from config.settings_test import *  # noqa: F403
from config.settings_test import IDEMPOTENCY

IDEMPOTENCY = {**IDEMPOTENCY, "FAULT_HOOK": "tests.support.faults.crash_once"}
