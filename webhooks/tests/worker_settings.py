"""Settings of the Celery worker that the delivery tests start: `config.settings_test` plus the
`WEBHOOKS` values the starting test had (its `settings` fixture overrides), passed as JSON."""

import json
import os

from config.settings_test import *  # noqa: F403
from config.settings_test import WEBHOOKS

WEBHOOKS = {**WEBHOOKS, **json.loads(os.environ.get("WEBHOOKS_TEST_OVERRIDES", "{}"))}
CELERY_BEAT_SCHEDULE = {
    "webhooks-sweep": {"task": "webhooks.sweep", "schedule": float(WEBHOOKS["SWEEP_INTERVAL_SECONDS"])},
}
