"""Google's and Microsoft's servers cannot be reached from the tests: this local HTTP server (on
127.0.0.1) replays their answers, recorded as the providers document them (calendars/tests/recorded/),
and keeps every request it was sent so that a test can read what the service asked.

`reply(method, path, *answers)` queues answers for a path (matched unquoted, without its query):
each request takes the next one, the last one stays."""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

RECORDED = Path(__file__).parent / "recorded"


def recorded(name: str, **values: str) -> dict:
    """A recorded answer (`google/token.json`), with its `__NAME__` placeholders filled in."""
    text = (RECORDED / name).read_text()
    for key, value in values.items():
        text = text.replace(f"__{key.upper()}__", value)
    return json.loads(text)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: dict | None = None
    headers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Seen:
    method: str
    path: str  # unquoted, without the query
    query: dict  # name -> first value
    headers: dict
    body: bytes

    @property
    def form(self) -> dict:
        return {name: values[0] for name, values in parse_qs(self.body.decode()).items()}

    @property
    def json(self) -> dict:
        return json.loads(self.body)


class RecordedServer:
    def __init__(self):
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[Seen] = []
        routes, seen = self.routes, self.requests

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                path = unquote(parts.path)
                query = {name: values[0] for name, values in parse_qs(parts.query).items()}
                seen.append(Seen(self.command, path, query, dict(self.headers), body))
                queue = routes.get((self.command, path))
                reply = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else Reply(404, {"error": "none"})
                payload = json.dumps(reply.body).encode() if reply.body is not None else b""
                self.send_response(reply.status)
                if payload:
                    self.send_header("Content-Type", "application/json; charset=UTF-8")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def reply(self, method: str, path: str, *answers: Reply) -> None:
        self.routes[(method, path)] = list(answers)

    def sent(self, method: str, path: str) -> list[Seen]:
        return [request for request in self.requests if request.method == method and request.path == path]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
