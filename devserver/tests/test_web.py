"""`make run`'s web server (devserver/web.py) on a real socket: every request is served by one of
its fixed threads whatever the number of clients, and connections that send nothing hold none of
them. (`test_make_run.py` counts its database connections under `make run` itself.)"""

import socket
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.servers.basehttp import WSGIRequestHandler

from devserver import web

CLIENT_TIMEOUT = 60  # a request stuck behind idle connections would wait IDLE_SECONDS (600 here)


def application(environ, start_response):
    body = threading.current_thread().name.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(web, "THREADS", 2)
    monkeypatch.setattr(web, "IDLE_SECONDS", 600)
    httpd = web.PooledWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    httpd.set_app(application)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def get(server) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/", timeout=CLIENT_TIMEOUT) as response:
        return response.read().decode()


def test_a_burst_is_served_by_the_fixed_threads_only(server):
    with ThreadPoolExecutor(max_workers=50) as pool:
        served_by = list(pool.map(lambda _: get(server), range(200)))

    assert len(served_by) == 200
    assert set(served_by) <= {"web-1", "web-2"}


def test_connections_that_send_nothing_hold_no_thread(server):
    idle = [socket.create_connection(("127.0.0.1", server.server_port)) for _ in range(5)]
    try:
        # More silent connections than threads, and requests are still answered ...
        assert {get(server) for _ in range(10)} <= {"web-1", "web-2"}
        # ... and the silent ones are still there, served once they speak.
        for connection in idle:
            connection.settimeout(CLIENT_TIMEOUT)
            connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert connection.recv(4096).startswith(b"HTTP/1.1 200 OK")
    finally:
        for connection in idle:
            connection.close()
