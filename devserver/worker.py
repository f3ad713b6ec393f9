"""The Celery app as `make run`'s worker and beat load it (`celery -A devserver.worker ...`): the
project's app, plus two things for a console a person reads.

- The worker's "received" / "succeeded" INFO lines of the periodic webhook and e-mail sweeps are left
  out: they run every few seconds, and those lines would push the demo credentials off the screen. The
  sweepers log on their own when they find work, and failures are still logged.
- Celery's "running the worker with superuser privileges" warning is left out: `make run` in a
  container usually runs as root, the broker is this machine's own folders (or the operator's
  Redis), and the app accepts JSON messages only (with pickle, Celery refuses root outright rather
  than warn). A production worker (`celery -A config worker`) still warns.
- When RUNDEV_READY_DIR is set, the worker and beat each drop a file there once they are up, so
  that `rundev` prints its banner after them rather than in the middle of their start-up output.
"""

import logging
import os
import warnings
from pathlib import Path

from celery import signals
from celery.exceptions import SecurityWarning

from config.celery import app

QUIET_TASKS = frozenset({"webhooks.sweep", "notifications.sweep"})


class QuietPeriodicTasks(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        data = getattr(record, "data", None)
        return not (record.levelno <= logging.INFO and isinstance(data, dict) and data.get("name") in QUIET_TASKS)


warnings.filterwarnings("ignore", category=SecurityWarning)

for _name in ("celery.worker.strategy", "celery.app.trace"):
    logging.getLogger(_name).addFilter(QuietPeriodicTasks())


def _mark_ready(name: str) -> None:
    ready_dir = os.environ.get("RUNDEV_READY_DIR")
    if ready_dir:
        Path(ready_dir, name).touch()


@signals.worker_ready.connect
def _worker_ready(**kwargs) -> None:
    _mark_ready("worker")


@signals.beat_init.connect
def _beat_ready(**kwargs) -> None:
    _mark_ready("beat")


__all__ = ["app"]
