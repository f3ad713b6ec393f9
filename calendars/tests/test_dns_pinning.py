"""Calendar requests go to the address the outbound rule checked: the name is resolved once, and a
DNS answer that changes between the check and the connection (rebinding) reaches nothing.

Two resolvers stand in for DNS. The rule's resolver (`OUTBOUND["RESOLVER"]`) gives the answer the
check sees; `socket.getaddrinfo`, which urllib3 would call if it resolved the name again, gives
another one. 127.0.0.1 is the only range allowed; a trap server listens on 127.0.0.2, the
"internal" address, and records whatever reaches it."""

import datetime
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from accounts.tests.factories import UserFactory
from calendars.models import CalendarConnection, ConnectionKind
from calendars.network import pinned_session
from calendars.oauth.http import request as provider_request
from calendars.providers import ProviderError, fetch_feed
from calendars.services import connect_caldav, connection_refresh
from core.exceptions import ApplicationError
from core.outbound import BlockedTarget

pytestmark = pytest.mark.django_db

CHECKED: dict[str, list[str]] = {}  # what the outbound rule's resolver answers


def resolve(host: str, port: int) -> list[str]:
    try:
        return list(CHECKED[host])
    except KeyError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None


class Recorder:
    """An HTTP server on `address` (optionally on a given port, optionally TLS) that records each
    request's method, path, Host header and TLS server name, answering `status` with `headers`."""

    def __init__(self, address: str, port: int = 0, status: int = 404, headers=None, tls: ssl.SSLContext | None = None):
        self.requests: list[dict] = []
        self.server_names: list[str | None] = []
        seen, answer_headers = self.requests, headers or {}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                seen.append({"method": self.command, "path": self.path, "host": self.headers.get("Host")})
                self.send_response(status)
                for name, value in answer_headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_PROPFIND = do_REPORT = do_PUT = do_DELETE = do_OPTIONS = _answer

        self.server = ThreadingHTTPServer((address, port), Handler)
        self.server.daemon_threads = True
        if tls is not None:
            tls.sni_callback = lambda sock, name, context: self.server_names.append(name)
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def dns(settings, monkeypatch):
    """`checked[name]`: the check's answer; `rebound[name]`: any later resolution's answer."""
    settings.OUTBOUND = {
        **settings.OUTBOUND,
        "ALLOWED_CIDRS": ["127.0.0.1/32"],
        "RESOLVER": "calendars.tests.test_dns_pinning.resolve",
    }
    rebound: dict[str, str] = {}
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in rebound:
            return real_getaddrinfo(rebound[host], port, *args, **kwargs)
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    CHECKED.clear()
    yield CHECKED, rebound
    CHECKED.clear()


@pytest.fixture
def trap_for(request):
    """A trap on 127.0.0.2 at the given port: the internal address a rebinding would reach."""
    traps = []

    def make(port: int) -> Recorder:
        trap = Recorder("127.0.0.2", port)
        traps.append(trap)
        return trap

    yield make
    for trap in traps:
        trap.stop()


def test_caldav_connects_to_the_checked_address_when_the_name_rebinds(dns, trap_for, caldav_account, make_calendar):
    checked, rebound = dns
    url, username, password = caldav_account
    make_calendar()
    port = int(url.rsplit(":", 1)[1].strip("/"))
    trap = trap_for(port)
    checked["calendar.test"], rebound["calendar.test"] = ["127.0.0.1"], "127.0.0.2"
    named_url = f"http://calendar.test:{port}/"
    # The setup is live: a client that resolves the name itself lands in the trap.
    requests.get(named_url, timeout=5)
    assert len(trap.requests) == 1
    trap.requests.clear()

    connection = connect_caldav(
        user=UserFactory(), kind=ConnectionKind.CALDAV, url=named_url, username=username, password=password
    )
    assert connection_refresh(connection=CalendarConnection.objects.get(pk=connection.pk))
    assert connection.calendars.count() == 1
    assert trap.requests == []


def test_a_name_the_check_refuses_is_never_connected_to(dns, caldav_account):
    checked, rebound = dns
    url, username, password = caldav_account
    receiver = Recorder("127.0.0.1")
    try:
        # The check sees the internal address; a second resolution would have seen an allowed one.
        checked["calendar.test"], rebound["calendar.test"] = ["127.0.0.2"], "127.0.0.1"
        with pytest.raises(ApplicationError) as refused:
            connect_caldav(
                user=UserFactory(),
                kind=ConnectionKind.CALDAV,
                url=f"http://calendar.test:{receiver.port}/",
                username=username,
                password=password,
            )
        assert "resolves to 127.0.0.2, a loopback address" in str(refused.value.detail)
        assert receiver.requests == []
        assert not CalendarConnection.objects.exists()
    finally:
        receiver.stop()


def test_caldav_redirects_are_checked_and_pinned_hop_by_hop(dns, trap_for):
    checked, rebound = dns
    legit = Recorder("127.0.0.1")
    trap = trap_for(legit.port)
    checked["calendar.test"], rebound["calendar.test"] = ["127.0.0.1"], "127.0.0.2"
    checked["internal.test"] = ["127.0.0.2"]
    to_internal = Recorder("127.0.0.1", status=308, headers={"Location": f"http://internal.test:{legit.port}/dav/"})
    to_rebinding = Recorder("127.0.0.1", status=308, headers={"Location": f"http://calendar.test:{legit.port}/dav/"})
    try:
        with pytest.raises(ApplicationError) as refused:
            connect_caldav(
                user=UserFactory(),
                kind=ConnectionKind.CALDAV,
                url=f"http://127.0.0.1:{to_internal.port}/",
                username="someone",
                password="s3cret",
            )
        assert "internal.test resolves to 127.0.0.2" in str(refused.value.detail)
        assert len(to_internal.requests) == 1

        with pytest.raises(ApplicationError):  # the legit server answers 404: not a CalDAV server
            connect_caldav(
                user=UserFactory(),
                kind=ConnectionKind.CALDAV,
                url=f"http://127.0.0.1:{to_rebinding.port}/",
                username="someone",
                password="s3cret",
            )
        assert legit.requests and legit.requests[0]["path"] == "/dav/"
        assert legit.requests[0]["host"] == f"calendar.test:{legit.port}"
        assert trap.requests == []
    finally:
        for server in (legit, to_internal, to_rebinding):
            server.stop()


def test_a_feed_is_fetched_from_the_checked_address_and_its_redirects_are_refused(dns, trap_for, feed_server):
    checked, rebound = dns
    feed_server.feeds["/pinned.ics"] = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nEND:VCALENDAR\r\n"
    port = feed_server.server.server_port
    trap = trap_for(port)
    checked["feeds.test"], rebound["feeds.test"] = ["127.0.0.1"], "127.0.0.2"
    answer = fetch_feed(f"http://feeds.test:{port}/pinned.ics")
    assert answer.data.startswith(b"BEGIN:VCALENDAR")
    assert trap.requests == []

    checked["internal.test"] = ["127.0.0.2"]
    redirector = Recorder("127.0.0.1", status=302, headers={"Location": f"http://internal.test:{port}/pinned.ics"})
    try:
        with pytest.raises(ProviderError, match="HTTP 302"):
            fetch_feed(f"http://127.0.0.1:{redirector.port}/feed.ics")
        assert trap.requests == []
    finally:
        redirector.stop()


def test_google_and_microsoft_requests_go_to_the_checked_address(dns, trap_for):
    checked, rebound = dns
    api = Recorder("127.0.0.1", status=404)
    trap = trap_for(api.port)
    try:
        checked["graph.test"], rebound["graph.test"] = ["127.0.0.1"], "127.0.0.2"
        answer = provider_request("Microsoft 365", "GET", f"http://graph.test:{api.port}/v1.0/me", token="t")
        assert answer.status == 404
        assert [(seen["path"], seen["host"]) for seen in api.requests] == [("/v1.0/me", f"graph.test:{api.port}")]
        assert trap.requests == []
        checked["internal.test"] = ["127.0.0.2"]
        with pytest.raises(ProviderError, match="127.0.0.2"):
            provider_request("Google Calendar", "GET", f"http://internal.test:{api.port}/calendar/v3")
        assert trap.requests == []
    finally:
        api.stop()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for `calendar.test` (its own CA): (certificate path, key path)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "calendar.test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("calendar.test")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    certificate_path, key_path = folder / "cert.pem", folder / "key.pem"
    certificate_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(certificate_path), str(key_path)


def test_https_keeps_the_name_for_sni_and_the_certificate_check(dns, trap_for, certificate):
    checked, rebound = dns
    certificate_path, key_path = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate_path, key_path)
    server = Recorder("127.0.0.1", status=200, tls=context)
    trap = trap_for(server.port)
    try:
        checked["calendar.test"], rebound["calendar.test"] = ["127.0.0.1"], "127.0.0.2"
        with pinned_session() as session:
            answer = session.get(f"https://calendar.test:{server.port}/feed.ics", verify=certificate_path, timeout=5)
        assert answer.status_code == 200
        assert server.server_names == ["calendar.test"]
        assert server.requests[0]["host"] == f"calendar.test:{server.port}"
        assert trap.requests == []

        # A name the certificate does not cover fails its check, though the address is the same.
        checked["other.test"] = ["127.0.0.1"]
        with pinned_session() as session, pytest.raises(requests.exceptions.SSLError):
            session.get(f"https://other.test:{server.port}/feed.ics", verify=certificate_path, timeout=5)
        assert len(server.requests) == 1
    finally:
        server.stop()


def test_a_refused_url_raises_before_anything_is_sent(dns):
    checked, _ = dns
    checked["internal.test"] = ["127.0.0.2"]
    with pinned_session() as session, pytest.raises(BlockedTarget):
        session.get("http://internal.test:9/", timeout=5)
