from django.db import transaction

from core.exceptions import NotFound
from core.models import App
from integrations.bodies import APP_NAMES
from webhooks.models import Webhook
from webhooks.selectors import webhook_list
from webhooks.services import webhook_create, webhook_delete


@transaction.atomic
def app_subscription_create(*, user, app_id: str, subscriber_url: str, trigger_event: str) -> Webhook:
    """A REST-hook subscription of an automation app: a webhook of the caller for one trigger,
    marked with the app (its deliveries take the app's body, webhooks.app_bodies). Everything a
    webhook create checks applies (the trigger's name, the subscriber URL, one per URL)."""
    App.objects.get_or_create(slug=app_id, defaults={"name": APP_NAMES[app_id], "categories": ["automation"]})
    return webhook_create(actor=user, subscriber_url=subscriber_url, event_triggers=[trigger_event], app_id=app_id)


@transaction.atomic
def app_subscription_delete(*, user, app_id: str, subscription_id) -> None:
    """Only the caller's subscriptions of this app; anything else is a 404."""
    webhook = webhook_list(user=user).filter(app_id=app_id, pk=subscription_id).first()
    if webhook is None:
        raise NotFound(f"Subscription {subscription_id} does not exist.")
    webhook_delete(webhook=webhook)
