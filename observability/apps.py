from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    name = "observability"

    def ready(self):
        """Switch on what the environment asks for (all off by default): Prometheus metrics
        (METRICS_ENABLED), OpenTelemetry traces (OTEL_TRACES_EXPORTER), JSON logs (LOG_FORMAT)."""
        from django.conf import settings

        if settings.METRICS_ENABLED:
            from observability import metrics

            metrics.install()
        if settings.TRACES_EXPORTER:
            from observability import tracing

            tracing.install(settings.TRACES_EXPORTER)
