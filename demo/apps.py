from django.apps import AppConfig


class DemoConfig(AppConfig):
    """Demo data for `make run` (`manage.py seed_demo`) and the demo OAuth client's redirect page.
    It uses every app, so it lives above them and nothing imports it."""

    name = "demo"
