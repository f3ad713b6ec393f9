"""OpenTelemetry traces (OTEL_TRACES_EXPORTER=otlp or console): a span for each request (Django),
each query (psycopg), each Redis command, each Celery task, published and run (the trace context
travels in the message's headers), and each webhook sent (httpx: the subscriber receives the
`traceparent` header, so its own tracing continues the same trace). Each request's span carries
its request id (`http.request_id`, the `X-Request-Id` answered).

The exporter is configured by OpenTelemetry's own environment variables: `OTEL_SERVICE_NAME`
(default `scheduling`), `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`),
`OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` (default: every trace)."""

import os

_installed = False


def _response_hook(span, request, response):
    request_id = getattr(request, "request_id", None)
    if request_id and span.is_recording():
        span.set_attribute("http.request_id", request_id)


def install(exporter: str) -> None:
    global _installed
    if _installed:
        return
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor

    provider = TracerProvider(
        resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "scheduling")})
    )
    if exporter == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(formatter=_one_line)))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)

    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    DjangoInstrumentor().instrument(response_hook=_response_hook)
    PsycopgInstrumentor().instrument(enable_commenter=False, skip_dep_check=True)
    RedisInstrumentor().instrument()
    HTTPXClientInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    _installed = True


def _one_line(span) -> str:
    return span.to_json(indent=None) + os.linesep
