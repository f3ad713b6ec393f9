"""Real servers on loopback for the calendar tests: Radicale (a CalDAV server, from PyPI) run as a
WSGI application in a thread, and a plain HTTP server for ICS feeds. Both bind an ephemeral port
on 127.0.0.1; Radicale can be stopped and started again on the same port (the outage drill)."""

import hashlib
import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import radicale
import radicale.config

PASSWORD = "correct horse battery staple"
ACCOUNTS = 100  # one account per test keeps each test's calendars apart on a shared server


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class RadicaleServer:
    def __init__(self, folder: Path):
        htpasswd = folder / "users"
        htpasswd.write_text("".join(f"user{number}:{PASSWORD}\n" for number in range(ACCOUNTS)))
        self._next_account = 0
        configuration = radicale.config.load()
        configuration.update(
            {
                "auth": {"type": "htpasswd", "htpasswd_filename": str(htpasswd), "htpasswd_encryption": "plain"},
                "storage": {"filesystem_folder": str(folder / "collections")},
                "rights": {"type": "owner_only"},
                "logging": {"level": "warning"},
            },
            "test",
            privileged=True,
        )
        self.application = radicale.Application(configuration)
        self.port = 0
        self.server = None
        self.start()

    def new_account(self) -> str:
        self._next_account += 1
        return f"user{self._next_account - 1}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        self.server = make_server(
            "127.0.0.1", self.port, self.application, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
        )
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FeedServer:
    """Serves `self.feeds[path] = bytes` with an ETag; counts requests and conditional hits."""

    def __init__(self):
        self.feeds: dict[str, bytes] = {}
        self.requests: list[dict] = []
        feeds, requests = self.feeds, self.requests

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                requests.append({"path": self.path, "if_none_match": self.headers.get("If-None-Match")})
                body = feeds.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/calendar")
                self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class XandikosServer:
    """Xandikos (a second CalDAV server, from PyPI, with its own reading of the RFCs) run through
    its WSGI entry in a thread; it serves one user and takes any credentials."""

    def __init__(self, folder: Path):
        from xandikos.web import SingleUserFilesystemBackend, XandikosApp

        backend = SingleUserFilesystemBackend(str(folder))
        backend._mark_as_principal("/user/")
        backend.create_principal("/user/", create_defaults=True)
        application = XandikosApp(backend, current_user_principal="/user/")

        def bounded_body(environ, start_response):
            # Xandikos reads a body to its end; wsgiref's input is the socket, which has none.
            length = int(environ.get("CONTENT_LENGTH") or 0)
            environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(length) if length else b"")
            return application.handle_wsgi_request(environ, start_response)

        self.server = make_server(
            "127.0.0.1",
            0,
            bounded_body,
            server_class=_ThreadingWSGIServer,
            handler_class=_QuietHandler,
        )
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
