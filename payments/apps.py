from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"
