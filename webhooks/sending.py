"""One HTTP request to a subscriber, on the address that passed the SSRF check.

The rule is in docs/webhooks.md, "Which URLs are accepted".

The host is resolved and checked once (`ssrf.resolve_target`); the request then goes to that IP
while the Host header and, for https, the TLS server name and certificate check keep the original
host name. Nothing is re-resolved between the check and the connection, so DNS rebinding cannot
slip a private address in. Redirects are never followed and proxies from the environment are
ignored (a proxy would do its own resolving).

Connections are kept alive between attempts: each worker thread keeps one `requests.Session` per
(scheme, host name, checked address, port), so a connection is only ever reused for a send whose
own check resolved to that same address. A session idle for longer than `KEEPALIVE_IDLE_SECONDS`
is closed rather than reused, because a receiver that closes idle connections could do so just as
the next request goes out (that request would fail as `connect` and wait for its retry).
"""

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter

from webhooks.conf import webhook_setting
from webhooks.ssrf import Target, TargetRefused, resolve_target


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


class PinnedAddressAdapter(HTTPAdapter):
    """Connects to the URL's (already rewritten) IP but verifies TLS against `server_hostname`."""

    def __init__(self, server_hostname: str, **kwargs):
        self.server_hostname = server_hostname
        super().__init__(max_retries=0, **kwargs)

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        if host_params["scheme"] == "https":
            pool_kwargs["server_hostname"] = self.server_hostname
            pool_kwargs["assert_hostname"] = self.server_hostname
        return host_params, pool_kwargs


# Per worker thread (and process: a forked child must not share its parent's sockets).
_sessions = threading.local()
MAX_SESSIONS_PER_THREAD = 64


def kept_alive_session(target: Target) -> requests.Session:
    """The calling thread's session for this checked address, opening one if needed and closing
    the ones left idle for too long."""
    pool = getattr(_sessions, "by_target", None)
    if pool is None or _sessions.pid != os.getpid():
        pool = _sessions.by_target = OrderedDict()
        _sessions.pid = os.getpid()
    now = time.monotonic()
    idle_limit = webhook_setting("KEEPALIVE_IDLE_SECONDS")
    # Least recently used first: close from the front while idle, and past the size limit.
    while pool:
        oldest_key, (oldest, last_used) = next(iter(pool.items()))
        if now - last_used <= idle_limit and len(pool) < MAX_SESSIONS_PER_THREAD:
            break
        del pool[oldest_key]
        oldest.close()
    key = (target.scheme, target.host, target.address, target.port)
    session = pool.pop(key, (None, 0.0))[0]
    if session is None:
        session = requests.Session()
        session.trust_env = False
        session.mount(f"{target.scheme}://", PinnedAddressAdapter(target.host, pool_connections=1, pool_maxsize=1))
    pool[key] = (session, now)
    return session


def close_kept_alive_sessions() -> None:
    """Close the calling thread's sessions (tests; a worker just lets them go with the process)."""
    pool = getattr(_sessions, "by_target", None) or {}
    while pool:
        pool.popitem()[1][0].close()


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def pinned_url(url: str, target: Target) -> tuple[str, str]:
    """(URL with the IP in place of the host, Host header value)."""
    parts = urlsplit(url)
    default_port = 443 if target.scheme == "https" else 80
    host_header = _bracket(target.host) + ("" if target.port == default_port else f":{target.port}")
    netloc = f"{_bracket(target.address)}:{target.port}"
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")), host_header


def _read_limited(response, limit: int) -> str:
    try:
        data = response.raw.read(limit, decode_content=True) or b""
    except Exception:  # noqa: BLE001 - a body that breaks off does not change the status we got
        data = b""
    # PostgreSQL text cannot hold NUL: unreplaced, it would fail the log of a sent attempt, and the
    # delivery would be sent again after every lease.
    return data[:limit].decode("utf-8", errors="replace").replace("\x00", "\ufffd")


def post(*, url: str, body: bytes, headers: dict[str, str]) -> SendResult:
    result = SendResult(request_headers=dict(headers))
    started = time.monotonic()
    try:
        target = resolve_target(url)
    except TargetRefused as error:
        result.error_class, result.error_message = error.error_class, str(error)
        result.duration_ms = int((time.monotonic() - started) * 1000)
        return result

    request_url, host_header = pinned_url(url, target)
    send_headers = {**headers, "Host": host_header}
    timeout = (webhook_setting("CONNECT_TIMEOUT_SECONDS"), webhook_setting("TIMEOUT_SECONDS"))
    session = kept_alive_session(target)
    try:
        response = session.post(
            request_url, data=body, headers=send_headers, timeout=timeout, allow_redirects=False, stream=True
        )
    except requests.exceptions.SSLError as error:
        result.error_class, result.error_message = "tls", str(error)
    except requests.exceptions.Timeout as error:
        result.error_class, result.error_message = "timeout", str(error)
    except requests.exceptions.RequestException as error:
        result.error_class, result.error_message = "connect", str(error)
    else:
        # Reading the whole (small) body hands the connection back for reuse; a body past the
        # limit is not drained: closing the response drops that connection instead.
        with response:
            result.response_status = response.status_code
            result.response_headers = dict(response.headers)
            result.response_body = _read_limited(response, webhook_setting("RESPONSE_BODY_LIMIT_BYTES"))
        if not 200 <= response.status_code < 300:
            result.error_class = "http"
            result.error_message = f"The subscriber answered {response.status_code}."
    result.duration_ms = int((time.monotonic() - started) * 1000)
    return result
