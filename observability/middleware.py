"""One middleware for what observability needs from each request: the request id for the log
lines (JSON logs), the request's count, status and time by route (metrics), and the database time.
In MIDDLEWARE only when something is switched on (config/settings.py), right after the request id
is chosen."""

import time

from django.conf import settings
from django.db import connection

from observability.context import request_id, request_trace_id
from observability.logs import current_trace_id


class ObservabilityMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.metrics = settings.METRICS_ENABLED
        if self.metrics:
            from observability import metrics

            self.observe_request, self.time_query = metrics.observe_request, metrics.time_query

    def __call__(self, request):
        # Kept until the next request sets its own: Django logs a 4xx/5xx answer ("Not Found: ...")
        # after the middleware has returned it, and that line must carry the id too.
        request_id.set(getattr(request, "request_id", ""))
        request_trace_id.set(current_trace_id())
        if not self.metrics:
            return self.get_response(request)
        started = time.perf_counter()
        with connection.execute_wrapper(self.time_query):
            response = self.get_response(request)
        self.observe_request(request, response, time.perf_counter() - started)
        return response
