"""Bodies of deliveries to webhooks that an integration app subscribed (`Webhook.app`).

Cal.com sends some apps' subscriptions another body than its envelope: Zapier's get the booking
flattened, and the MEETING_* triggers of every app subscription are posted as the booking record
itself. The app that serves those integrations registers a renderer per app id when Django starts;
a renderer returns None where the envelope (or the webhook's template) applies as usual.
"""

from collections.abc import Callable

from webhooks.templating import RenderedBody

AppRenderer = Callable[..., RenderedBody | None]  # (*, trigger_event, created_at, payload)

_renderers: dict[str, AppRenderer] = {}


def register(app_id: str, renderer: AppRenderer) -> None:
    _renderers[app_id] = renderer


def render_for_app(app_id: str | None, *, trigger_event: str, created_at: str, payload: dict) -> RenderedBody | None:
    renderer = _renderers.get(app_id) if app_id else None
    if renderer is None:
        return None
    return renderer(trigger_event=trigger_event, created_at=created_at, payload=payload)
