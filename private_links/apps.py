from django.apps import AppConfig


class PrivateLinksConfig(AppConfig):
    name = "private_links"
