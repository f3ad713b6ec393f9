from django.apps import AppConfig
from django.db.backends.signals import connection_created


class CoreConfig(AppConfig):
    name = "core"

    def ready(self):
        from core.fastpath.db_loaders import use_compiled_datetime_loader

        connection_created.connect(use_compiled_datetime_loader, dispatch_uid="core.fastpath.db_loaders")
