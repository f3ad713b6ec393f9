"""gunicorn settings for production and `make bench`:

    gunicorn -c config/gunicorn.conf.py config.wsgi

Flags on the command line and `GUNICORN_CMD_ARGS` override these. gunicorn's own environment
variables still apply: `PORT` (binds 0.0.0.0:$PORT) and `WEB_CONCURRENCY` (the number of workers).
"""

import os
import shutil
import tempfile
import threading

# Each worker tells the master it is alive by touching a file every second or so. In /tmp on a disk
# (containers, VMs) that metadata write can block the worker, a request with it, for as long as the
# disk takes; in memory it cannot (gunicorn's docs recommend /dev/shm for this).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# gunicorn answers some malformed requests itself, before the application sees them: a request line
# over `limit_request_line` bytes (414), more than `limit_request_fields` headers or one over
# `limit_request_field_size` bytes (431), an unparsable request line or header (400). Its defaults,
# spelled out here, are what docs/operations.md documents.
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190


_refused = threading.local()  # the request line's start of the error being answered, per thread


def _problem_write_error(sock, status_int, reason, mesg):
    """gunicorn writes those answers with `gunicorn.util.write_error` as a small HTML page; this
    writes them as the problem+json every other error of the service has (docs/api.md), with the
    same status and gunicorn's one-line message as `detail`, or, for a request of a /v2/ path, in
    v2's error envelope (`calv2.wire.envelope_from_problem`). Same signature, same job: the
    worker calls it and closes the connection."""
    import json
    import uuid

    from gunicorn.util import write_nonblock

    codes = {
        400: "malformed_request",
        403: "permission_denied",
        414: "uri_too_long",
        431: "request_header_fields_too_large",
        500: "server_error",
    }
    code = codes.get(status_int, reason.lower().replace(" ", "_"))
    detail = mesg or reason
    request_id = uuid.uuid4().hex
    body = json.dumps(
        {
            "status": status_int,
            "code": code,
            "title": reason,
            "detail": detail,
            "message": detail,
            "requestId": request_id,
        }
    ).encode()
    content_type = "application/problem+json"
    target = _v2_target(getattr(_refused, "line_start", b""))
    if target is not None:
        from calv2.wire import envelope_from_problem

        problem = {"code": code, "detail": detail}
        body = json.dumps(envelope_from_problem(problem, status=status_int, path=target)).encode()
        content_type = "application/json"
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-Id: {request_id}\r\n\r\n"
    ).encode("latin-1")
    write_nonblock(sock, head + body)


def _v2_target(line_start: bytes) -> str | None:
    """The request target of a request line (as far as it was read) when it is a /v2/ path."""
    _, _, rest = line_start.partition(b" ")
    target = rest.split(b" ", 1)[0].decode("latin-1")
    return target if target.startswith("/v2/") else None


def _answer_gunicorns_own_errors_with_problem_json():
    from gunicorn import util
    from gunicorn.http.errors import LimitRequestLine
    from gunicorn.http.message import Request
    from gunicorn.workers.base import Worker

    util.write_error = _problem_write_error

    # A request refused while its head is read never becomes a request: its request line (what
    # was read of it, for one over the limit) is kept on the error, so that the answer can tell a
    # /v2/ path (a request line over the limit: with gunicorn's Python parser only; with the
    # optional C parser that answer stays problem+json).
    read_line = Request.read_line
    parse = Request.parse

    def parse_keeping_the_request_line(self, unreader):
        try:
            return parse(self, unreader)
        except Exception as error:
            if not getattr(error, "line_start", b"") and self.uri:
                error.line_start = f"{self.method} {self.uri}".encode("latin-1", "replace")
            raise

    def read_line_keeping_its_start(self, unreader, buf, limit=0):
        try:
            return read_line(self, unreader, buf, limit)
        except LimitRequestLine as error:
            error.line_start = bytes(buf[: max(limit, 0) or len(buf)])
            raise

    handle_error = Worker.handle_error

    def handle_error_knowing_the_line(self, req, client, addr, exc):
        _refused.line_start = getattr(exc, "line_start", b"")
        try:
            return handle_error(self, req, client, addr, exc)
        finally:
            _refused.line_start = b""

    Request.read_line = read_line_keeping_its_start
    Request.parse = parse_keeping_the_request_line
    Worker.handle_error = handle_error_knowing_the_line


_answer_gunicorns_own_errors_with_problem_json()


# Prometheus metrics (METRICS_ENABLED): each worker process keeps its counters in files of one
# folder, and /metrics adds them up, whichever worker answers the scrape (observability.metrics).
# The folder is this master's own, emptied when it starts; a worker that exits is marked dead so
# that its gauges stop counting (its counters are kept).
if os.environ.get("METRICS_ENABLED", "").strip().lower() in ("1", "true", "yes", "on"):
    os.environ.setdefault(
        "PROMETHEUS_MULTIPROC_DIR",
        os.path.join(
            "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir(), f"scheduling-metrics-{os.getpid()}"
        ),
    )

    def on_starting(server):
        folder = os.environ["PROMETHEUS_MULTIPROC_DIR"]
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)

    def child_exit(server, worker):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)

    def on_exit(server):
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
