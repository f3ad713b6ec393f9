"""`make run`'s web server: Django's development server (autoreload, static files, its request
log) with a fixed pool of request threads instead of a new thread per connection.

Django's `runserver` starts a thread for every connection, and each thread opens its own database
connection, kept `CONN_MAX_AGE` seconds after the thread is gone: a script that sends requests one
after another, or a burst of concurrent ones, climbs to PostgreSQL's `max_connections` and gets
503s. Here `THREADS` threads serve every connection, each keeping one database connection
(reused, and renewed after `CONN_MAX_AGE` as in production), so the web server never holds more
than `THREADS` connections. Connections waiting for a thread queue in the kernel's backlog and the
server's queue, not in PostgreSQL.

Without `ThreadingMixIn`, Django's server answers every request with `Connection: close`: an idle
keep-alive connection never holds a thread. A connection that sends nothing for `IDLE_SECONDS` is
dropped.
"""

import queue
import threading

from django.core.servers.basehttp import WSGIServer

THREADS = 8
IDLE_SECONDS = 30
BACKLOG = 1024  # the kernel caps it at net.core.somaxconn


class PooledWSGIServer(WSGIServer):
    request_queue_size = BACKLOG

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending: queue.SimpleQueue = queue.SimpleQueue()
        for number in range(THREADS):
            threading.Thread(target=self._serve_pending, name=f"web-{number + 1}", daemon=True).start()

    def process_request(self, request, client_address):
        """Called by the accept loop: hand the connection to the pool and go back to accepting."""
        request.settimeout(IDLE_SECONDS)
        self._pending.put((request, client_address))

    def _serve_pending(self) -> None:
        while True:
            request, client_address = self._pending.get()
            try:
                self.finish_request(request, client_address)
            except TimeoutError:
                pass  # a client that connected and went quiet
            except Exception:  # noqa: BLE001 - as socketserver does: report it, keep the thread
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
