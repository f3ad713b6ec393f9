"""One middleware for what observability needs from each request: the request id for the log
lines (JSON logs), the request's count, status and time by route (metrics), and its database and
Redis time. In MIDDLEWARE only when something is switched on (config/settings.py), right after the
request id is chosen."""

import time

from django.conf import settings
from django.db import connection

from observability.context import request_id, request_trace_id
from observability.logs import current_trace_id


class ObservabilityMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.metrics = settings.METRICS_ENABLED
        # Without tracing there is no trace id to keep for the log lines.
        self.traced = bool(settings.TRACES_EXPORTER)
        if self.metrics:
            from observability import metrics

            self.observe_request, self.RequestTimings, self.current = (
                metrics.observe_request,
                metrics.RequestTimings,
                metrics.current,
            )

    def __call__(self, request):
        # Kept until the next request sets its own: Django logs a 4xx/5xx answer ("Not Found: ...")
        # after the middleware has returned it, and that line must carry the id too.
        request_id.set(getattr(request, "request_id", ""))
        if self.traced:
            request_trace_id.set(current_trace_id())
        if not self.metrics:
            return self.get_response(request)
        # Django's `connection.execute_wrapper()` without its context manager's cost: the
        # request's queries and Redis commands are counted in `timings`, added up as it ends.
        timings = self.RequestTimings()
        token = self.current.set(timings)
        wrappers = connection.execute_wrappers
        wrappers.append(timings.time_query)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            wrappers.pop()
            self.current.reset(token)
            timings.flush()
        self.observe_request(request, response, time.perf_counter() - started)
        return response
