"""Outbound HTTP of connected calendars (CalDAV servers and ICS feeds), sent to the address the
outbound rule checked.

`core.outbound.resolve_target` resolves a URL's host once and checks every address it gets.
`PinnedAdapter`, a `requests` transport adapter, then hands urllib3 that checked address as the
host to connect to, while the `Host` header, the TLS server name (SNI) and the certificate's
hostname check keep the name from the URL. Nothing resolves the name a second time between the
check and the connection, so a DNS answer that changes in between (rebinding) cannot reach an
address the rule refuses.

Every request a session sends passes through the adapter's `send`, the redirects that `requests`
follows included (a CalDAV server may send the client on to a principal or a calendar home
elsewhere): each hop is resolved, checked and pinned on its own. urllib3 keys its connection pools
by (scheme, address, port, server name), so a kept-alive connection is reused only for a request
whose own check chose that address for that name. Proxies are never used (a proxy would resolve
the name itself): the session ignores the environment's, and the adapter drops any passed to it.
"""

import time

import requests

from core.outbound import Target, resolve_target


def host_header(target: Target) -> str:
    """The `Host` header of a request to `target`: the name as written, with a port that is not
    the scheme's default."""
    host = f"[{target.host}]" if ":" in target.host else target.host
    default_port = 443 if target.scheme == "https" else 80
    return host if target.port == default_port else f"{host}:{target.port}"


class PinnedAdapter(requests.adapters.HTTPAdapter):
    """Sends each request to the address its own outbound check returned (raises
    `core.outbound.TargetRefused` before anything is sent when the rule refuses the URL)."""

    def send(self, request, **kwargs):
        target = resolve_target(request.url)
        # Read back when urllib3's pool is chosen (build_connection_pool_key_attributes, below).
        request.pinned_target = target
        request.headers["Host"] = host_header(target)
        kwargs["proxies"] = None
        return super().send(request, **kwargs)

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        target: Target = request.pinned_target
        host_params = {**host_params, "host": target.address, "port": target.port}
        if target.scheme == "https":
            # SNI and the certificate check are for the name, not for the address connected to.
            pool_kwargs = {**pool_kwargs, "server_hostname": target.host, "assert_hostname": target.host}
        return host_params, pool_kwargs


def pin(session: requests.Session) -> requests.Session:
    """Route every request of `session` through `PinnedAdapter`, without the environment's proxies
    or `.netrc`."""
    session.trust_env = False
    for scheme in ("http://", "https://"):
        session.mount(scheme, PinnedAdapter())
    return session


def pinned_session() -> requests.Session:
    return pin(requests.Session())


class AnswerTooLarge(Exception):
    """The answer's body grew past the limit while it was read."""


class AnswerTooSlow(Exception):
    """The answer's body was still coming when the whole answer's time was up."""


def read_bounded(response: requests.Response, *, limit: int, timeout: float) -> bytes:
    """The body of a streamed answer, read until it ends, more than `limit` bytes have come
    (`AnswerTooLarge`) or `timeout` seconds have passed in all (`AnswerTooSlow`: a bound on the
    whole answer, not only on each read, so a server trickling bytes cannot hold a worker)."""
    body = bytearray()
    deadline = time.monotonic() + timeout
    for chunk in response.iter_content(chunk_size=65536):
        body.extend(chunk)
        if len(body) > limit:
            raise AnswerTooLarge
        if time.monotonic() > deadline:
            raise AnswerTooSlow
    return bytes(body)
