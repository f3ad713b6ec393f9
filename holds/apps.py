from django.apps import AppConfig


class HoldsConfig(AppConfig):
    name = "holds"

    def ready(self):
        # Payload templates of OOO_CREATED are checked against an out-of-office entry's payload.
        from holds.payloads import sample_ooo_payload
        from webhooks.models import WebhookTrigger
        from webhooks.samples import provide_sample

        provide_sample(WebhookTrigger.OOO_CREATED, sample_ooo_payload)
