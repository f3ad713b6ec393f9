"""One HTTP request to a subscriber, on the address that passed the SSRF check, sent from an
asyncio event loop so that a waiting attempt costs a socket, not a worker process.

The rule is in docs/webhooks.md, "Which URLs are accepted"; the I/O model and why it was chosen in
"Isolation".

The host is resolved and checked once (`ssrf.resolve_target`, in a thread of the loop's executor
since name resolution blocks); the request then goes to that IP while the Host header and, for
https, the TLS server name (`sni_hostname`) and certificate check keep the original host name.
Nothing is re-resolved between the check and the connection, so DNS rebinding cannot slip a
private address in. Redirects are never followed and proxies from the environment are ignored (a
proxy would do its own resolving).

Each process has one sender: a daemon thread running an event loop with one `httpx.AsyncClient`
per (scheme, host name, checked address, port). A connection is thus only ever reused for a send
whose own check resolved to that same address, and never across host names that share an IP (the
TLS check was made for one name). Connections idle for longer than `KEEPALIVE_IDLE_SECONDS` are
closed rather than reused, because a receiver that closes idle connections could do so just as the
next request goes out.

Timeouts: `CONNECT_TIMEOUT_SECONDS` to open the connection (TCP and TLS), then
`TIMEOUT_SECONDS` for the whole answer (status, headers and the part of the body we keep), so a
subscriber that trickles its answer byte by byte is cut off like one that never answers.
"""

import asyncio
import concurrent.futures
import logging
import os
import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import httpx

from webhooks.conf import webhook_setting
from webhooks.ssrf import Target, TargetRefused, resolve_target

MAX_CLIENTS = 4096
# httpx logs every request at INFO; the attempt log already has each one, with more.
logging.getLogger("httpx").setLevel(logging.WARNING)


@dataclass
class SendResult:
    request_headers: dict
    duration_ms: int = 0
    response_status: int | None = None
    response_headers: dict = field(default_factory=dict)
    response_body: str = ""
    error_class: str = ""
    error_message: str = ""

    @property
    def succeeded(self) -> bool:
        return not self.error_class and self.response_status is not None and 200 <= self.response_status < 300

    @property
    def unreachable(self) -> bool:
        """The subscriber did not answer at all (what the circuit breaker counts)."""
        return self.error_class in ("timeout", "connect", "tls", "dns")


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def pinned_url(url: str, target: Target) -> tuple[str, str]:
    """(URL with the IP in place of the host, Host header value)."""
    parts = urlsplit(url)
    default_port = 443 if target.scheme == "https" else 80
    host_header = _bracket(target.host) + ("" if target.port == default_port else f":{target.port}")
    netloc = f"{_bracket(target.address)}:{target.port}"
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")), host_header


def _clean_text(data: bytes, limit: int) -> str:
    # PostgreSQL text cannot hold NUL: unreplaced, it would fail the log of a sent attempt, and the
    # delivery would be sent again after every lease.
    return data[:limit].decode("utf-8", errors="replace").replace("\x00", "\ufffd")


def _headers_as_sent(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The answer's headers with their names spelled as the subscriber sent them (httpx's own
    mapping lower-cases them); a repeated header's values are joined with ", "."""
    headers: dict[str, str] = {}
    for name, value in raw:
        name_text, value_text = name.decode("latin-1"), value.decode("latin-1")
        headers[name_text] = f"{headers[name_text]}, {value_text}" if name_text in headers else value_text
    return headers


def _is_tls_error(error: BaseException) -> bool:
    while error is not None:
        if isinstance(error, ssl.SSLError | ssl.CertificateError):
            return True
        error = error.__cause__ or error.__context__
    return False


def _raise_open_files_limit() -> None:
    """Hundreds of attempts in flight are hundreds of sockets: lift the soft limit on open files
    (often 1024) to the hard one, as far as the system allows."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 65536
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            pass


class Sender:
    """An event loop in a daemon thread, with its clients. `submit` may be called from any thread."""

    def __init__(self):
        _raise_open_files_limit()
        self.loop = asyncio.new_event_loop()
        self.clients: OrderedDict[tuple, tuple[httpx.AsyncClient, float]] = OrderedDict()
        self.ssl_context = ssl.create_default_context()
        self.in_flight = 0
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), name="webhook-sender", daemon=True)
        self.thread.start()
        started.wait()

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(started.set)
        self.loop.run_forever()

    def submit(self, *, url: str, body: bytes, headers: dict[str, str]) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(self.post(url=url, body=body, headers=headers), self.loop)

    def _client(self, target: Target) -> httpx.AsyncClient:
        now = time.monotonic()
        idle_limit = webhook_setting("KEEPALIVE_IDLE_SECONDS")
        # Least recently used first: drop clients left idle (their pools are empty by then) and
        # past the size limit.
        while self.clients:
            oldest_key, (oldest, last_used) = next(iter(self.clients.items()))
            if now - last_used <= idle_limit + 1 and len(self.clients) < MAX_CLIENTS:
                break
            del self.clients[oldest_key]
            self.loop.create_task(oldest.aclose())
        key = (target.scheme, target.host, target.address, target.port)
        client = self.clients.pop(key, (None, 0.0))[0]
        if client is None:
            client = httpx.AsyncClient(
                verify=self.ssl_context,
                trust_env=False,
                follow_redirects=False,
                limits=httpx.Limits(
                    max_connections=None,
                    max_keepalive_connections=webhook_setting("CONCURRENCY_PER_WEBHOOK"),
                    keepalive_expiry=idle_limit,
                ),
            )
        self.clients[key] = (client, now)
        return client

    async def post(self, *, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
        self.in_flight += 1
        try:
            return await self._post(url=url, body=body, headers=headers)
        finally:
            self.in_flight -= 1

    async def _post(self, *, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
        result = SendResult(request_headers=dict(headers))
        started = time.monotonic()
        try:
            target = await self.loop.run_in_executor(None, resolve_target, url)
        except TargetRefused as error:
            result.error_class, result.error_message = error.error_class, str(error)
            result.duration_ms = int((time.monotonic() - started) * 1000)
            return result

        request_url, host_header = pinned_url(url, target)
        connect_timeout = webhook_setting("CONNECT_TIMEOUT_SECONDS")
        answer_timeout = webhook_setting("TIMEOUT_SECONDS")
        limit = webhook_setting("RESPONSE_BODY_LIMIT_BYTES")
        client = self._client(target)
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        request = client.build_request(
            "POST",
            request_url,
            content=body,
            headers={**headers, "Host": host_header},
            timeout=httpx.Timeout(answer_timeout, connect=connect_timeout),
            extensions=extensions,
        )
        try:
            async with asyncio.timeout(connect_timeout + answer_timeout):
                response = await client.send(request, stream=True)
                try:
                    result.response_status = response.status_code
                    result.response_headers = _headers_as_sent(response.headers.raw)
                    data = bytearray()
                    try:
                        async for chunk in response.aiter_bytes():
                            data += chunk
                            if len(data) >= limit:
                                break  # not drained: closing the response drops this connection
                    except httpx.HTTPError:
                        pass  # a body that breaks off does not change the status we got
                    result.response_body = _clean_text(bytes(data), limit)
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.TimeoutException) as error:
            result.error_class = "timeout"
            result.error_message = str(error) or (
                f"No answer within {connect_timeout:g} s to connect and {answer_timeout:g} s to answer."
            )
        except httpx.HTTPError as error:
            result.error_class = "tls" if _is_tls_error(error) else "connect"
            result.error_message = str(error) or type(error).__name__
        except OSError as error:
            result.error_class, result.error_message = "connect", str(error)
        else:
            if not 200 <= result.response_status < 300:
                result.error_class = "http"
                result.error_message = f"The subscriber answered {result.response_status}."
        if result.error_class in ("timeout", "connect", "tls"):
            result.response_status, result.response_headers, result.response_body = None, {}, ""
        result.duration_ms = int((time.monotonic() - started) * 1000)
        return result

    async def _close_all(self) -> None:
        clients = [client for client, _ in self.clients.values()]
        self.clients.clear()
        for client in clients:
            await client.aclose()

    def close_clients(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close_all(), self.loop).result(10)


_sender = {"pid": None, "sender": None}
_sender_lock = threading.Lock()


def sender() -> Sender:
    """This process's sender (a forked worker child starts its own loop)."""
    with _sender_lock:
        if _sender["pid"] != os.getpid() or _sender["sender"] is None:
            _sender["sender"] = Sender()
            _sender["pid"] = os.getpid()
        return _sender["sender"]


def post(*, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
    """Send and wait for the result (test sends from the web process, and tests)."""
    return sender().submit(url=url, body=body, headers=headers).result()


def close_kept_alive_sessions() -> None:
    """Close this process's kept-alive connections (tests)."""
    if _sender["sender"] is not None and _sender["pid"] == os.getpid():
        _sender["sender"].close_clients()
