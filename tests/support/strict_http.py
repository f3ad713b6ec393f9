"""A strict HTTP/1.1 client for tests against a live server: each request on its own connection
(`Connection: close`), the answer read to the end of the connection, and a body that is not exactly
one message (`Content-Length` bytes, or whole chunks) or JSON that does not parse raises `CutShort`."""

import json
import socket
from dataclasses import dataclass

TIMEOUT = 20.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


class CutShort(AssertionError):
    pass


def _dechunk(raw: bytes) -> bytes:
    body, rest = b"", raw
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body
        if len(rest) < size + 2 or rest[size : size + 2] != b"\r\n":
            raise CutShort("a chunk is shorter than its size")
        body, rest = body + rest[:size], rest[size + 2 :]


def strict_request(base: str, method: str, target: str, headers: dict | None = None, body: bytes = b"") -> Answer:
    """One request on its own connection; the answer is read to the end of the connection and must
    be exactly one HTTP message: a body of `Content-Length` bytes, or whole chunks."""
    host, port = base.removeprefix("http://").split(":")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    return exchange(base, request, method=method, target=target)


def exchange(base: str, request: bytes, *, method: str = "GET", target: str = "/") -> Answer:
    """Send `request` (raw bytes) and read its answer strictly."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as connection:
        connection.sendall(request)
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, separator, raw = data.partition(b"\r\n\r\n")
    if not separator:
        raise CutShort(f"{method} {target}: no complete head in {data[:200]!r}")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    answer_headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in header_lines)}
    status = int(status_line.split()[1])
    if "content-length" in answer_headers:
        declared = int(answer_headers["content-length"])
        if method == "HEAD" or status in (204, 304):
            declared = 0
        if len(raw) != declared:
            raise CutShort(f"{method} {target} -> {status}: Content-Length {declared}, body of {len(raw)} bytes")
    elif answer_headers.get("transfer-encoding", "").lower() == "chunked":
        raw = _dechunk(raw)
    answer = Answer(status, answer_headers, raw)
    if answer.headers.get("content-type", "").startswith(("application/json", "application/problem+json")):
        answer.json()  # parses, or fails the test
    return answer
