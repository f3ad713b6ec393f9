"""The local webhook receivers of the delivery benchmarks (`make bench-webhooks`,
`make bench-noisy-neighbour`): real HTTP servers on 127.0.0.1."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class InstantReceiver:
    """Answers every delivery at once (204), keep-alive, recording when each event first arrived.
    Subclasses change the answer (`answer`), not the server."""

    def __init__(self):
        self.received: dict[str, float] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers = receiver.answer(self.headers["webhook-id"])
                try:
                    self.send_response(status)
                    for name, value in {**headers, "Content-Length": "0"}.items():
                        self.send_header(name, value)
                    self.end_headers()
                except OSError:  # the worker gave up waiting (a slow answer past its timeout)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 1024
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = self.server.server_address[1]

    def answer(self, message: str) -> tuple[int, dict[str, str]]:
        self.received.setdefault(message, time.time())
        return 204, {}

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"
