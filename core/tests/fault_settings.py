"""The test settings plus the Idempotency-Key fault hook (core.tests.faults), for the crash tests'
server process."""

from config.settings_test import *  # noqa: F403
from config.settings_test import IDEMPOTENCY

IDEMPOTENCY = {**IDEMPOTENCY, "FAULT_HOOK": "core.tests.faults.crash_once"}
