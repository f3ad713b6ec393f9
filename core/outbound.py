"""The one rule for every request this service sends out: webhooks, CalDAV servers and calendar
feeds (docs/calendars.md, "Security").

A URL is refused unless it is https (or http, when the operator allows it: `OUTBOUND_ALLOW_HTTP`),
carries no credentials, and every address its host resolves to is public, or inside an operator
allow-listed range (`OUTBOUND_ALLOWED_CIDRS`). Callers check at the time a URL is saved and again
before each request, on the address they then connect to (`resolve_target` returns it), so DNS
rebinding gains nothing. An app may hand its own `Policy` (webhooks keep their setting names as
aliases of these).
"""

import ipaddress
import re
import socket
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.module_loading import import_string

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
OUTBOUND_DEFAULTS = {"ALLOWED_CIDRS": [], "ALLOW_HTTP": False, "RESOLVER": "core.outbound.system_resolve"}

# inet_aton's legacy spellings of IPv4 (decimal 2130706433, octal 0177.0.0.1, hex 0x7f.1, 127.1):
# browsers and libc still honour them, so they must be judged as the address they stand for.
LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)
METADATA_ADDRESSES = {
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("169.254.170.2"),
    ipaddress.ip_address("100.100.100.200"),
    ipaddress.ip_address("fd00:ec2::254"),
}


class TargetRefused(Exception):
    """Base: `error_class` is the attempt log's error class, the message says why."""

    error_class = "blocked"


class BlockedTarget(TargetRefused):
    error_class = "blocked"


class UnresolvableTarget(TargetRefused):
    error_class = "dns"


@dataclass(frozen=True)
class Policy:
    """Who may be called: ranges allowed despite the rule, whether plain http is, how names
    resolve (a dotted path), and the setting an operator would change to allow http (named in the
    refusal)."""

    allowed_cidrs: tuple[str, ...] = ()
    allow_http: bool = False
    resolver: str = "core.outbound.system_resolve"
    allow_http_setting: str = "OUTBOUND_ALLOW_HTTP"


def outbound_policy() -> Policy:
    """The operator's rule for every outbound request (`settings.OUTBOUND`), read at call time."""
    conf = {**OUTBOUND_DEFAULTS, **getattr(settings, "OUTBOUND", {})}
    return Policy(
        allowed_cidrs=tuple(conf["ALLOWED_CIDRS"]), allow_http=bool(conf["ALLOW_HTTP"]), resolver=conf["RESOLVER"]
    )


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as written in the URL (Host header and TLS server name)
    port: int
    address: str  # the checked IP to connect to


def system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


@lru_cache(maxsize=32)
def _allowed_networks(cidrs: tuple[str, ...]):
    return [ipaddress.ip_network(cidr, strict=False) for cidr in cidrs]


def _is_allow_listed(address: IPAddress, policy: Policy) -> bool:
    networks = _allowed_networks(policy.allowed_cidrs)
    return any(address.version == network.version and address in network for network in networks)


# IANA special-purpose ranges that Python 3.11's `is_global` still calls global (fixed in later
# Pythons). None of them is a subscriber on the public Internet.
NON_PUBLIC_NETWORKS = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "192.0.0.0/24",  # IETF protocol assignments
        "192.88.99.0/24",  # deprecated 6to4 relay anycast
        "2001::/23",  # IETF protocol assignments (Teredo's client is checked below)
    )
)
NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form really reaches: IPv4-mapped, 6to4, Teredo client, NAT64."""
    if address.version != 6:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal_reason(address: IPAddress, policy: Policy) -> str | None:
    """Why this address may not be called, or None if it may."""
    mapped = _embedded_ipv4(address)
    if mapped is not None:
        reason = refusal_reason(mapped, policy)
        return f"{reason} (IPv4-mapped)" if reason else None
    if _is_allow_listed(address, policy):
        return None
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    for label, flag in (
        ("a loopback address", address.is_loopback),
        ("an unspecified address", address.is_unspecified),
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("a reserved address", address.is_reserved),
        ("a private address", address.is_private),
    ):
        if flag:
            return label
    if not address.is_global or any(
        address.version == network.version and address in network for network in NON_PUBLIC_NETWORKS
    ):
        return "a non-public address"
    return None


def literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    if LEGACY_IPV4.match(host):
        try:
            return ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def split_url(url: str, policy: Policy) -> tuple[str, str, int]:
    """(scheme, host, port) of an acceptable URL, or BlockedTarget naming what is wrong."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise BlockedTarget(f"The URL is not valid ({error}).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BlockedTarget("Only http and https URLs are accepted.")
    if scheme == "http" and not policy.allow_http:
        # Webhook payloads and calendar events carry attendees' personal data, calendar requests a
        # password: none of it may be read on the way. The operator may allow http.
        raise BlockedTarget(f"Only https URLs are accepted (the operator may allow http: {policy.allow_http_setting}).")
    if parts.username is not None or parts.password is not None:
        raise BlockedTarget("The URL must not contain credentials.")
    if not parts.hostname:
        raise BlockedTarget("The URL has no host.")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80)


def resolve_target(url: str, policy: Policy | None = None) -> Target:
    """Resolve the URL's host and check every address; the first one is where to connect."""
    policy = policy or outbound_policy()
    scheme, host, port = split_url(url, policy)
    literal = literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        resolver = import_string(policy.resolver)
        try:
            addresses = [ipaddress.ip_address(raw.split("%")[0]) for raw in resolver(host, port)]
        except (OSError, UnicodeError) as error:
            raise UnresolvableTarget(f"The host {host} could not be resolved ({error}).") from None
        if not addresses:
            raise UnresolvableTarget(f"The host {host} could not be resolved.")
    for address in addresses:
        reason = refusal_reason(address, policy)
        if reason:
            shown = f"::ffff:{address.ipv4_mapped}" if getattr(address, "ipv4_mapped", None) else address
            raise BlockedTarget(f"The host {host} resolves to {shown}, {reason}.")
    return Target(scheme=scheme, host=host, port=port, address=str(addresses[0]))
