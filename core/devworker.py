"""The Celery app as `make run`'s worker loads it (`celery -A core.devworker worker`): the project's
app, with the worker's "received" / "succeeded" INFO lines of the periodic webhook sweep left out.

The sweep runs every few seconds; those lines would push the demo credentials off the screen. The
sweeper logs on its own when it finds work, and failures are still logged.
"""

import logging

from config.celery import app

QUIET_TASKS = frozenset({"webhooks.sweep"})


class QuietPeriodicTasks(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        data = getattr(record, "data", None)
        return not (record.levelno <= logging.INFO and isinstance(data, dict) and data.get("name") in QUIET_TASKS)


for _name in ("celery.worker.strategy", "celery.app.trace"):
    logging.getLogger(_name).addFilter(QuietPeriodicTasks())

__all__ = ["app"]
