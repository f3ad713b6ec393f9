"""Which subscriber URLs may be called (docs/webhooks.md, "Which URLs are accepted").

A URL is refused unless it is https (or http, when the operator allows it: `WEBHOOKS["ALLOW_HTTP"]`),
carries no credentials, and every address its host
resolves to is public, or inside an operator allow-listed range (`WEBHOOKS["ALLOWED_CIDRS"]`).
The same check runs at create/update time and again at send time on the address actually
connected to (`resolve_target` returns it, the sender pins it), so DNS rebinding gains nothing.
"""

import ipaddress
import re
import socket
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from django.utils.module_loading import import_string

from webhooks.conf import webhook_setting

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

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


def _is_allow_listed(address: IPAddress) -> bool:
    networks = _allowed_networks(tuple(webhook_setting("ALLOWED_CIDRS")))
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


def refusal_reason(address: IPAddress) -> str | None:
    """Why this address may not be called, or None if it may."""
    mapped = _embedded_ipv4(address)
    if mapped is not None:
        reason = refusal_reason(mapped)
        return f"{reason} (IPv4-mapped)" if reason else None
    if _is_allow_listed(address):
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


def split_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an acceptable URL, or BlockedTarget naming what is wrong."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise BlockedTarget(f"The URL is not valid ({error}).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BlockedTarget("Only http and https URLs are accepted.")
    if scheme == "http" and not webhook_setting("ALLOW_HTTP"):
        # As Cal.com's hosted API did: payloads carry attendees' personal data and a signature that
        # proves nothing if the body can be read on the way. The operator may allow http.
        raise BlockedTarget("Only https URLs are accepted (the operator may allow http: WEBHOOK_ALLOW_HTTP).")
    if parts.username is not None or parts.password is not None:
        raise BlockedTarget("The URL must not contain credentials.")
    if not parts.hostname:
        raise BlockedTarget("The URL has no host.")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80)


def resolve_target(url: str) -> Target:
    """Resolve the URL's host and check every address; the first one is where to connect."""
    scheme, host, port = split_url(url)
    literal = literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        resolver = import_string(webhook_setting("RESOLVER"))
        try:
            addresses = [ipaddress.ip_address(raw.split("%")[0]) for raw in resolver(host, port)]
        except (OSError, UnicodeError) as error:
            raise UnresolvableTarget(f"The host {host} could not be resolved ({error}).") from None
        if not addresses:
            raise UnresolvableTarget(f"The host {host} could not be resolved.")
    for address in addresses:
        reason = refusal_reason(address)
        if reason:
            shown = f"::ffff:{address.ipv4_mapped}" if getattr(address, "ipv4_mapped", None) else address
            raise BlockedTarget(f"The host {host} resolves to {shown}, {reason}.")
    return Target(scheme=scheme, host=host, port=port, address=str(addresses[0]))
