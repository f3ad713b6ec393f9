"""The off switch of the speed machinery: `FAST_PATHS` (README, "Configuration").

Read on every use, so that a test can answer one request with it on and the same request with it
off (`override_settings`); the two pieces set once per process or connection (the collector and
the date-time loader) read it when they are set.
"""

from django.conf import settings


def fast_paths() -> bool:
    """Whether the speed machinery answers (the default), or plain Django and DRF do."""
    return settings.FAST_PATHS
