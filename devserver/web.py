"""`make run`'s web server: Django's development server (autoreload, static files, its request
log) with a fixed pool of request threads instead of a new thread per connection.

Django's `runserver` starts a thread for every connection, and each thread opens its own database
connection, kept `CONN_MAX_AGE` seconds after the thread is gone: a script that sends requests one
after another, or a burst of concurrent ones, climbs to PostgreSQL's `max_connections` and gets
503s. Here `THREADS` threads serve every request, each keeping one database connection (reused,
and renewed after `CONN_MAX_AGE` as in production), so the web server never holds more than
`THREADS` database connections, however many clients connect.

A connection reaches the pool only once it has sent something: until then it waits in one
selector thread (a browser's speculative connection, a client that connected and went quiet), so
idle connections never hold a request thread; one silent for `IDLE_SECONDS` is closed. Without
`ThreadingMixIn`, Django's server answers every request with `Connection: close`.
"""

import queue
import selectors
import socket
import threading
import time

from django.core.servers.basehttp import WSGIServer

THREADS = 8
IDLE_SECONDS = 30
BACKLOG = 1024  # the kernel caps it at net.core.somaxconn


class PooledWSGIServer(WSGIServer):
    request_queue_size = BACKLOG

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._arrived: queue.SimpleQueue = queue.SimpleQueue()  # accepted, not yet known to the selector
        self._ready: queue.SimpleQueue = queue.SimpleQueue()  # sent a request: for the pool
        self._wake_reader, self._wake_writer = socket.socketpair()
        threading.Thread(target=self._wait_for_requests, name="web-waiting", daemon=True).start()
        for number in range(THREADS):
            threading.Thread(target=self._serve_ready, name=f"web-{number + 1}", daemon=True).start()

    def process_request(self, request, client_address):
        """Called by the accept loop: the connection waits for its request; back to accepting."""
        self._arrived.put((request, client_address))
        self._wake_writer.send(b"\0")

    def _wait_for_requests(self) -> None:
        deadlines: dict[socket.socket, float] = {}
        with selectors.DefaultSelector() as waiting:
            waiting.register(self._wake_reader, selectors.EVENT_READ)
            while True:
                for key, _events in waiting.select(timeout=1):
                    if key.fileobj is self._wake_reader:
                        self._wake_reader.recv(4096)
                        while not self._arrived.empty():
                            request, client_address = self._arrived.get()
                            try:
                                waiting.register(request, selectors.EVENT_READ, client_address)
                            except (OSError, ValueError):  # already reset by the client
                                self.shutdown_request(request)
                                continue
                            deadlines[request] = time.monotonic() + IDLE_SECONDS
                    else:
                        waiting.unregister(key.fileobj)
                        del deadlines[key.fileobj]
                        self._ready.put((key.fileobj, key.data))
                now = time.monotonic()
                for request in [request for request, deadline in deadlines.items() if deadline < now]:
                    waiting.unregister(request)
                    del deadlines[request]
                    self.shutdown_request(request)

    def _serve_ready(self) -> None:
        while True:
            request, client_address = self._ready.get()
            request.settimeout(IDLE_SECONDS)  # a request that stops half-way
            try:
                self.finish_request(request, client_address)
            except TimeoutError:
                pass
            except Exception:  # noqa: BLE001 - as socketserver does: report it, keep the thread
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
