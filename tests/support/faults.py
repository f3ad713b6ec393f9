"""A fault hook for the crash tests: the server process dies at a chosen point of a keyed write.

`IDEMPOTENCY_CRASH_AT` names the point ("stored": the answer is written, not yet committed;
"committed": committed, not yet answered). The crash happens once: the process removes the
`IDEMPOTENCY_CRASH_ARMED` file before it dies, and a missing file disarms the hook.
"""

import os


def crash_once(point: str) -> None:
    armed = os.environ.get("IDEMPOTENCY_CRASH_ARMED", "")
    if point != os.environ.get("IDEMPOTENCY_CRASH_AT") or not armed or not os.path.exists(armed):
        return
    os.unlink(armed)
    os._exit(70)  # no cleanup, no answer: as a SIGKILL or a power cut would leave it
