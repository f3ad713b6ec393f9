from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"

    def ready(self):
        # Deliveries to the webhooks these apps subscribe have the apps' own bodies; the delivery
        # engine finds them through its registry (webhooks.app_bodies), not by importing this app.
        from integrations.bodies import register_app_bodies

        register_app_bodies()
