from django.apps import AppConfig


class CalV2Config(AppConfig):
    name = "calv2"
    verbose_name = "Cal.com API v2 layer"
