"""/v2/webhooks and /v2/event-types/{id}/webhooks over the webhook services."""

from rest_framework import status

from calv2 import inputs, selectors, shapes
from calv2.views.base import V2View, v2_field_names
from core.exceptions import NotFound
from core.query import Integer, QueryParameters
from core.scopes import (
    READ_WEBHOOK,
    WRITE_WEBHOOK,
)
from scheduling.selectors.event_types import event_type_list
from webhooks.services import webhook_create, webhook_delete, webhook_update


class WebhookPages(QueryParameters):
    take = Integer(minimum=1, maximum=250, default=250, description="Page size (at most 250).")
    skip = Integer(minimum=0, maximum=10**9, default=0, description="Webhooks to skip.")


class WebhookOwnerMixin:
    """`/v2/webhooks` are the caller's own; `/v2/event-types/{eventTypeId}/webhooks` an event
    type's, which the caller must see (else 404) and manage (the service's rule: else 403)."""

    scopes = {"GET": READ_WEBHOOK, "POST": WRITE_WEBHOOK, "PATCH": WRITE_WEBHOOK, "DELETE": WRITE_WEBHOOK}

    @property
    def event_type_id(self) -> int | None:
        value = self.kwargs.get("event_type_id")
        return int(value) if value is not None else None

    def owned_webhooks(self):
        user = self.request.user
        if self.event_type_id is None:
            return selectors.webhooks_of_user(user=user)
        if not event_type_list(user=user).filter(pk=self.event_type_id).exists():
            raise NotFound(f"Event type with id={self.event_type_id} not found.")
        return selectors.webhooks_of_event_type(user=user, event_type_id=self.event_type_id)

    def owned_webhook(self, webhook_id):
        webhook = self.owned_webhooks().filter(pk=webhook_id).first()
        if webhook is None:
            raise NotFound(f"Webhook with id={webhook_id} not found.")
        return webhook


class WebhooksView(WebhookOwnerMixin, V2View):
    def get(self, request, **kwargs):
        page = WebhookPages.parse(request)
        webhooks = self.owned_webhooks()[page["skip"] : page["skip"] + page["take"]]
        return self.success([shapes.webhook(webhook) for webhook in webhooks])

    def post(self, request, **kwargs):
        self.owned_webhooks()  # the event type's 404 before the body's 400
        data = self.body(inputs.WebhookCreateInput)
        with v2_field_names({"eventTriggers": "triggers"}):
            webhook = webhook_create(
                actor=request.user,
                subscriber_url=data["subscriber_url"],
                event_triggers=data["triggers"],
                payload_template=data.get("payload_template"),
                active=data["active"],
                secret=data.get("secret"),
                event_type_id=self.event_type_id,
            )
        return self.success(shapes.webhook(webhook), status_code=status.HTTP_201_CREATED)


class WebhookView(WebhookOwnerMixin, V2View):
    def get(self, request, webhook_id, **kwargs):
        return self.success(shapes.webhook(self.owned_webhook(webhook_id)))

    def patch(self, request, webhook_id, **kwargs):
        webhook = self.owned_webhook(webhook_id)
        data = self.body(inputs.WebhookUpdateInput)
        names = {
            "subscriber_url": "subscriber_url",
            "triggers": "event_triggers",
            "payload_template": "payload_template",
        }
        names |= {"active": "active", "secret": "secret"}
        changes = {service_name: data[name] for name, service_name in names.items() if name in data}
        with v2_field_names({"eventTriggers": "triggers"}):
            webhook = webhook_update(webhook=webhook, **changes)
        return self.success(shapes.webhook(webhook))

    def delete(self, request, webhook_id, **kwargs):
        webhook = self.owned_webhook(webhook_id)
        body = shapes.webhook(webhook)
        webhook_delete(webhook=webhook)
        return self.success(body)
