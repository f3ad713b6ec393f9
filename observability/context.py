"""The request id (and trace id) of the request this thread is serving, for the log lines it writes."""

import contextvars

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
request_trace_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_trace_id", default="")
