"""What the delivery engine tells anyone listening (the metrics of `observability`), without
knowing who listens."""

from django.dispatch import Signal

# After each finished attempt: `outcome` ("succeeded", "http_error" for an answer outside 2xx, or
# the error class: "timeout", "connect", ...), `lag_seconds` (from the event to the attempt's start).
attempt_finished = Signal()


def attempt_outcome(result) -> str:
    if result.succeeded:
        return "succeeded"
    return result.error_class or "http_error"
