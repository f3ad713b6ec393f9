"""Which subscriber URLs may be called (docs/webhooks.md, "Which URLs are accepted").

The rule is the one every outbound request passes (`core.outbound`); webhooks read it through their
own settings (`WEBHOOKS["ALLOWED_CIDRS"]`, `["ALLOW_HTTP"]`, `["RESOLVER"]`), which default to the
operator's `OUTBOUND_*` values (`WEBHOOK_ALLOWED_CIDRS` and `WEBHOOK_ALLOW_HTTP` are their aliases).
"""

from core.outbound import (
    BlockedTarget,
    Policy,
    Target,
    TargetRefused,
    UnresolvableTarget,
    system_resolve,
)
from core.outbound import resolve_target as _resolve_target
from webhooks.conf import webhook_setting

__all__ = ["BlockedTarget", "Target", "TargetRefused", "UnresolvableTarget", "resolve_target", "system_resolve"]


def webhook_policy() -> Policy:
    return Policy(
        allowed_cidrs=tuple(webhook_setting("ALLOWED_CIDRS")),
        allow_http=bool(webhook_setting("ALLOW_HTTP")),
        resolver=webhook_setting("RESOLVER"),
        allow_http_setting="WEBHOOK_ALLOW_HTTP",
    )


def resolve_target(url: str) -> Target:
    """Resolve the URL's host and check every address under the webhooks' policy."""
    return _resolve_target(url, webhook_policy())
