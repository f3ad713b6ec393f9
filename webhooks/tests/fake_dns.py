"""A resolver for tests (`WEBHOOKS["RESOLVER"] = "webhooks.tests.fake_dns.resolve"`): names map to
whatever addresses the test puts in ADDRESSES, so a host can "rebind" between checks."""

import socket

ADDRESSES: dict[str, list[str]] = {}


def resolve(host: str, port: int) -> list[str]:
    try:
        return list(ADDRESSES[host])
    except KeyError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
