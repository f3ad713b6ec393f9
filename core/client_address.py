"""The client's address, the one place that reads it (REMOTE_ADDR and X-Forwarded-For).

Behind proxies every request arrives from the nearest proxy's address; each proxy appends the
address it received the request from to `X-Forwarded-For`. Only the entries the trusted proxies
appended can be believed: anything further left is whatever the client chose to send. The chain
read from the right is `REMOTE_ADDR`, then `X-Forwarded-For` from its last entry to its first.

- `TRUSTED_PROXY_CIDRS` (a list of networks): walk the chain from the right past every address
  inside those networks; the first one outside is the client. The right setting when the proxies'
  addresses are known (a load balancer's subnet, the ingress pods' network).
- otherwise `TRUSTED_PROXY_COUNT` (N proxies in front of the service, e.g. 2 for a load balancer
  and an ingress): the client is the address N hops from the right of the chain.

With fewer entries than trusted hops (a request that did not come through every proxy) the
leftmost address of the chain is taken: it was written by a trusted proxy or is REMOTE_ADDR itself.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]):
    return tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs if cidr.strip())


def address_in(address: str, cidrs) -> bool:
    """Whether `address` (an IP address as text; anything else is not) is inside one of `cidrs`."""
    return _is_trusted(address, _networks(tuple(cidrs)))


def _is_trusted(address: str, networks) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    if parsed.version == 6 and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in networks)


def address_chain(request) -> list[str]:
    """REMOTE_ADDR first, then X-Forwarded-For from its last entry to its first (nearest hop first)."""
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    chain = [request.META.get("REMOTE_ADDR", "") or "unknown"]
    chain.extend(part for part in reversed(forwarded) if part)
    return chain


def client_address(request) -> str:
    chain = address_chain(request)
    cidrs = tuple(getattr(settings, "TRUSTED_PROXY_CIDRS", ()) or ())
    if cidrs:
        networks = _networks(cidrs)
        for address in chain:
            if not _is_trusted(address, networks):
                return address
        return chain[-1]
    hops = max(0, int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0))
    return chain[min(hops, len(chain) - 1)]
