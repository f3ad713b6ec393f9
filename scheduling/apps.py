from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"

    def ready(self):
        # Webhooks learn about bookings from here, not by importing this app (webhooks.sources).
        from scheduling.webhook_source import SOURCE
        from webhooks.sources import provide

        provide(SOURCE)
