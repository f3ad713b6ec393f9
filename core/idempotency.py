"""`Idempotency-Key` on every write of the API (docs/api.md, "Retrying writes safely").

Follows the IETF httpapi draft (draft-ietf-httpapi-idempotency-key-header), with Stripe's
behaviour where the draft leaves a choice:

- a `POST`, `PATCH` or `DELETE` with the header runs once; its answer (status, `Content-Type`,
  `Location`, body bytes) is stored **in the transaction of the write**, so a crash leaves both
  the write and its record, or neither;
- a repeat with the same key, method, path and body gets the stored answer byte for byte with
  `Idempotent-Replayed: true`; nothing runs again, so no webhook is emitted again;
- the same key with another method, path or body is a 422 `idempotency_key_reused`;
- a repeat while the first is still running is a 409 `idempotency_key_in_use` with `Retry-After`;
- 4xx answers are stored and replayed; 5xx answers are not (the write is rolled back), so the
  client may retry.

How "in use" is detected without ever waiting on a lock: the request's transaction first takes a
transaction-level advisory lock on (user, key) with `pg_try_advisory_xact_lock`, which answers at
once, and reads the stored record in the same statement. Whoever holds the lock is the only one
that may run the request and write the record; the lock goes with the transaction (commit,
rollback, or the connection dropping when the process dies), so it cannot outlive a crash.
PostgreSQL makes a commit visible before it releases the transaction's locks, so a request that
gets the lock after the first one committed finds its record. The one gap (the record committed
between this statement's snapshot and its taking the lock) is closed by the unique (user, key)
index: the final insert then finds the row, and this request rolls back and answers 409, and the
client's retry gets the replay.
"""

import hashlib
import json
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode

from django.conf import settings
from django.db import connection, transaction
from django.http import HttpResponse
from django.utils import timezone
from django.utils.module_loading import import_string
from rest_framework import status

from core.batches import delete_in_batches
from core.exceptions import ApplicationError, Conflict

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
WRITE_METHODS = frozenset({"POST", "PATCH", "DELETE"})
STORED_HEADERS = ("Content-Type", "Location")
KEY_MAX_LENGTH = 255

DEFAULTS = {
    "RETENTION_SECONDS": int(timedelta(hours=24).total_seconds()),
    "IN_USE_RETRY_AFTER_SECONDS": 1,
    "PURGE_BATCH_SIZE": 1000,
    "PURGE_INTERVAL_SECONDS": 600,
    # Dotted path of `hook(point: str)`, called at "stored" (the answer is written, the transaction
    # not yet committed) and "committed" (committed, the answer not yet sent). None in production;
    # the crash tests point it at a function that kills the process there.
    "FAULT_HOOK": None,
}


def idempotency_setting(name: str):
    return {**DEFAULTS, **getattr(settings, "IDEMPOTENCY", {})}[name]


class IdempotencyKeyReused(ApplicationError):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "idempotency_key_reused"
    default_detail = "This Idempotency-Key was used for another request."


class IdempotencyKeyInUse(Conflict):
    default_code = "idempotency_key_in_use"
    default_detail = "A request with this Idempotency-Key is still running; retry after the time in Retry-After."

    def __init__(self, detail=None):
        super().__init__(detail)
        self.retry_after = idempotency_setting("IN_USE_RETRY_AFTER_SECONDS")


class Replay(Exception):
    """Raised once the stored answer is found: nothing else of the request runs."""

    def __init__(self, record: dict):
        self.record = record

    def response(self) -> HttpResponse:
        response = HttpResponse(bytes(self.record["response_body"]), status=self.record["response_status"])
        for name, value in self.record["response_headers"].items():
            response[name] = value
        response[REPLAYED_HEADER] = "true"
        return response


def _fault(point: str) -> None:
    hook = idempotency_setting("FAULT_HOOK")
    if hook:
        import_string(hook)(point)


def validate_key(value: str) -> str:
    if not 1 <= len(value) <= KEY_MAX_LENGTH or any(not 0x20 <= ord(char) <= 0x7E for char in value):
        message = f"Must be 1 to {KEY_MAX_LENGTH} printable ASCII characters."
        raise ApplicationError(f"Invalid input. {HEADER}: {message}", errors={HEADER: [message]})
    return value


def request_fingerprint(request) -> tuple[str, str, str]:
    """(method, path, hash of the query string without `apiKey` and of the body's canonical JSON).

    Two bodies that are the same JSON (key order, spacing, escapes) hash the same; a body that is
    not JSON, or nested too deep for the decoder (which the parser then refuses with a 400), is
    hashed as its bytes. The `apiKey` credential is neither stored nor hashed."""
    django_request = getattr(request, "_request", request)
    body = django_request.body
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except (ValueError, UnicodeDecodeError, RecursionError):
        canonical = body
    query = sorted((name, value) for name, value in parse_qsl(django_request.META.get("QUERY_STRING", ""), True))
    query_text = urlencode([(name, value) for name, value in query if name != "apiKey"])
    digest = hashlib.sha256(query_text.encode() + b"\n" + canonical).hexdigest()
    return request.method, django_request.path, digest


def _lock_id(user_id: int, key: str) -> int:
    digest = hashlib.blake2b(f"idempotency\0{user_id}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


CLAIM_SQL = """
SELECT pg_try_advisory_xact_lock(%(lock)s), record.id, record.method, record.path, record.request_hash,
       record.response_status, record.response_headers, record.response_body, record.expires_at
FROM (SELECT 1) AS one
LEFT JOIN core_idempotencyrecord AS record ON record.user_id = %(user)s AND record.key = %(key)s
"""

# A record past its retention is replaced (the purge may not have reached it yet).
STORE_SQL = """
INSERT INTO core_idempotencyrecord
    (user_id, key, method, path, request_hash, response_status, response_headers, response_body,
     created_at, expires_at)
VALUES (%(user)s, %(key)s, %(method)s, %(path)s, %(hash)s, %(status)s, %(headers)s::jsonb, %(body)s,
        %(now)s, %(expires)s)
ON CONFLICT (user_id, key) DO UPDATE SET
    method = EXCLUDED.method, path = EXCLUDED.path, request_hash = EXCLUDED.request_hash,
    response_status = EXCLUDED.response_status, response_headers = EXCLUDED.response_headers,
    response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
WHERE core_idempotencyrecord.expires_at <= %(now)s
RETURNING id
"""


class Claim:
    """This request holds the key: it runs, and `store` writes its answer."""

    def __init__(self, *, user_id: int, key: str, method: str, path: str, request_hash: str):
        self.user_id, self.key, self.method, self.path, self.request_hash = user_id, key, method, path, request_hash

    def store(self, response) -> bool:
        """Write the answer in the current transaction; False if another request's record is there
        (the race described in the module docstring)."""
        now = timezone.now()
        headers = {name: response[name] for name in STORED_HEADERS if response.has_header(name)}
        with connection.cursor() as cursor:
            cursor.execute(
                STORE_SQL,
                {
                    "user": self.user_id,
                    "key": self.key,
                    "method": self.method,
                    "path": self.path,
                    "hash": self.request_hash,
                    "status": response.status_code,
                    "headers": json.dumps(headers),
                    "body": bytes(response.content),
                    "now": now,
                    "expires": now + timedelta(seconds=idempotency_setting("RETENTION_SECONDS")),
                },
            )
            return cursor.fetchone() is not None


def claim(*, user, key: str, request) -> Claim:
    """Inside the request's transaction: hold the key, or raise Replay / IdempotencyKeyReused /
    IdempotencyKeyInUse. Never waits for another transaction."""
    method, path, request_hash = request_fingerprint(request)
    with connection.cursor() as cursor:
        cursor.execute(CLAIM_SQL, {"lock": _lock_id(user.pk, key), "user": user.pk, "key": key})
        locked, record_id, *record = cursor.fetchone()
    if not locked:
        raise IdempotencyKeyInUse()
    if record_id is not None:
        names = ("method", "path", "request_hash", "response_status", "response_headers", "response_body", "expires_at")
        stored = dict(zip(names, record, strict=True))
        if stored["expires_at"] > timezone.now():
            if (stored["method"], stored["path"], stored["request_hash"]) != (method, path, request_hash):
                raise IdempotencyKeyReused(
                    f"This Idempotency-Key was first used for {stored['method']} {stored['path']} with another "
                    "body or query; use a new key for a different request."
                    if (stored["method"], stored["path"]) == (method, path)
                    else f"This Idempotency-Key was first used for {stored['method']} {stored['path']}; "
                    "use a new key for a different request."
                )
            if isinstance(stored["response_headers"], str):
                stored["response_headers"] = json.loads(stored["response_headers"])
            raise Replay(stored)
    return Claim(user_id=user.pk, key=key, method=method, path=path, request_hash=request_hash)


class IdempotentWritesMixin:
    """For the API's views (core.viewsets): a keyed write runs in one transaction that takes the
    key, runs the handler and stores the answer. Authentication, the rate limit and the scope
    check come first, so a refused request is not stored; a replay still counts against the rate
    limit."""

    idempotency_claim: Claim | None = None

    def dispatch(self, request, *args, **kwargs):
        if request.method not in WRITE_METHODS or HEADER not in request.headers:
            return super().dispatch(request, *args, **kwargs)
        with transaction.atomic():
            response = super().dispatch(request, *args, **kwargs)
        if self.idempotency_claim is not None:
            _fault("committed")
        return response

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in WRITE_METHODS and HEADER in request.headers and self._handles(request.method):
            key = validate_key(request.headers[HEADER])
            self.idempotency_claim = claim(user=request.user, key=key, request=request)

    def _handles(self, method: str) -> bool:
        """Whether the view has a handler for `method`: one it does not allow is a 405 whatever the
        key says (DRF runs `initial` before it looks for the handler), and nothing is stored."""
        name = method.lower()
        return name in self.http_method_names and hasattr(self, name)

    def handle_exception(self, exc):
        if isinstance(exc, Replay):
            return exc.response()
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        held = self.idempotency_claim
        if held is None:
            return response
        if response.status_code >= 500 or connection.needs_rollback:
            # Not stored: the write (if any) is undone with it, and the client may retry.
            self.idempotency_claim = None
            transaction.set_rollback(True)
            return response
        response.render()
        if not held.store(response):
            self.idempotency_claim = None
            transaction.set_rollback(True)
            exc = IdempotencyKeyInUse()
            return super().finalize_response(request, self.handle_exception(exc), *args, **kwargs)
        _fault("stored")
        return response


def purge_expired(*, now=None, batch_size: int | None = None) -> int:
    """Delete expired records in batches (`core.batches`: short transactions that never wait on a
    request); returns how many went."""
    return delete_in_batches(
        table="core_idempotencyrecord",
        where="expires_at <= %s",
        params=[now or timezone.now()],
        order_by="expires_at",
        batch_size=batch_size or idempotency_setting("PURGE_BATCH_SIZE"),
    )
