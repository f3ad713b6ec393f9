"""JSON log lines (LOG_FORMAT=json): one object per line with `time` (UTC, ISO 8601, milliseconds),
`level`, `logger`, `message`, the `requestId` of the request being served and the `traceId` of the
current OpenTelemetry span, or of that request's (when tracing is on), an `event` when the record
has one, and the exception's traceback as `exception`."""

import json
import logging
from datetime import UTC, datetime

from observability.context import request_id, request_trace_id

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def current_trace_id() -> str:
    try:
        from opentelemetry import trace
    except ImportError:  # pragma: no cover - a runtime requirement
        return ""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else ""


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "requestId": request_id.get(),
            "traceId": current_trace_id() or request_trace_id.get(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in line and not key.startswith("_"):
                line[key] = value if isinstance(value, str | int | float | bool | type(None)) else str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)
