"""The rate limit of `POST /webhooks/{id}/recover`: one call per webhook every
RECOVER_MIN_INTERVAL_SECONDS, counted in the cache (Redis), so it holds across processes."""

import logging

from django.core.cache import cache

from core.exceptions import RateLimited
from webhooks.conf import webhook_setting

logger = logging.getLogger(__name__)


def check_recover_rate(webhook) -> None:
    interval = webhook_setting("RECOVER_MIN_INTERVAL_SECONDS")
    if interval <= 0:
        return
    try:
        first = cache.add(f"webhooks:recover:{webhook.pk}", 1, timeout=interval)
    except Exception:  # noqa: BLE001 - the cache is down: recover is idempotent, let it through
        logger.warning("Could not count a recover call of webhook %s; allowed", webhook.pk)
        return
    if not first:
        raise RateLimited(wait=interval)
