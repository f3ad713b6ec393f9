"""Every answer the test suite receives, checked against the OpenAPI document.

The root conftest wraps Django's test client (so `client`, `api_client` and every `Client()` /
`APIClient()`) and, in tests that use `live_server`, the `requests` calls to that server. Each
answer is matched to its documented operation and validated with openapi-core: the status must be
documented for that operation, the content type must be one the status declares, the body must
match the schema, and the headers declared required must be sent.

The check is stricter than OpenAPI's defaults, so that the document says *exactly* what is sent:
an object schema that says nothing about `additionalProperties` allows no other keys (openapi-core's
`additional_properties_default_policy="forbid"`), so an undocumented key fails like a missing one.

What is not an operation of the document:
- a path no operation matches (`/v1/nope`) may only answer the 404 problem (or one of the problems
  given before routing: 400, 413, 429, 503);
- a documented API path with an undocumented method may only answer 405 (or those), with the body
  that the path's operations document for that status (the OAuth endpoints' `OAuthError`), else
  the problem; a page's own form POST (the consent form) is not an API call;
- paths outside the API (sign-in pages, the admin, the docs pages, probes) are not checked, nor
  the document itself and its page (`/v1/openapi.json`, `/v1/openapi.yaml`, `/v1/docs`), which
  the document does not list as operations;
- a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered by middleware
  before any operation and is not checked.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import parse_qsl, urlsplit

from openapi_core import Config, OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound, ServerNotFound
from openapi_core.templating.responses.exceptions import ResponseNotFound
from werkzeug.datastructures import Headers, ImmutableMultiDict

# Paths whose answers are API answers (documented or not); the rest is pages and probes.
API_PREFIXES = ("/v1/", "/api/", "/.well-known/")
NOT_OPERATIONS = ("/v1/openapi.json", "/v1/openapi.yaml", "/v1/docs", "/openapi.json", "/openapi.yaml", "/docs")
# Answers given before a request reaches its operation (a NUL in the query, a body over the size
# limit, the rate limit, the database down): a path or method that is not an operation gets them too.
BEFORE_ROUTING = (400, 413, 429, 503)
# Resource paths that also answer without the `/v1` prefix (the document lists only `/v1/…`).
ALIASES = (("/v1/hooks", "/v1/webhooks"),)


class ContractViolation(AssertionError):
    """An answer the OpenAPI document does not describe."""


@dataclass
class _Request:
    host_url: str
    path: str
    method: str
    parameters: RequestParameters
    content_type: str = "application/json"
    body: bytes | None = None

    @property
    def full_url_pattern(self) -> str:
        return self.host_url + self.path


@dataclass
class _Response:
    data: bytes
    status_code: int
    content_type: str
    headers: Headers = field(default_factory=Headers)


def _nullable_references(node):
    """drf-spectacular writes "X or null" as `{allOf: [X], nullable: true}`, which generators
    (openapi-python-client, openapi-generator) and schemathesis read as meant; openapi-core applies
    OpenAPI 3.0.3's letter (`nullable` without `type` adds nothing) and refuses the null. The
    checker's copy of the document spells the same meaning in a form openapi-core reads."""
    if isinstance(node, dict):
        node = {key: _nullable_references(value) for key, value in node.items()}
        all_of = node.get("allOf")
        if node.get("nullable") is True and "type" not in node and isinstance(all_of, list) and len(all_of) == 1:
            rest = {key: value for key, value in node.items() if key not in ("allOf", "nullable")}
            null = {"type": "string", "nullable": True, "enum": [None]}
            return {**rest, "anyOf": [all_of[0], null]}
        return node
    if isinstance(node, list):
        return [_nullable_references(value) for value in node]
    return node


class DocumentContract:
    """The document, ready to check answers: `violations(...)` lists what does not match."""

    def __init__(self, document: dict):
        self.document = document
        config = Config(
            extra_media_type_deserializers={"application/problem+json": json.loads},
            additional_properties_default_policy="forbid",
        )
        self.openapi = OpenAPI.from_dict(_nullable_references(document), config=config)
        self._lock = threading.Lock()  # live-server tests may call from several threads
        templates = list(document.get("paths", {}))
        self._paths = [(template, self._template_regex(template)) for template in templates]

    @staticmethod
    def _template_regex(template: str) -> re.Pattern:
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        return re.compile(f"^{pattern}$")

    def canonical_path(self, path: str) -> str | None:
        """The documented path this request path is answered as, or None (no operation's path)."""
        for alias, canonical in ALIASES:
            if path == alias or path.startswith(alias + "/"):
                path = canonical + path[len(alias) :]
        candidates = [path] if path.startswith("/v1/") else [path, "/v1" + path]
        for candidate in candidates:
            if any(regex.match(candidate) for _, regex in self._paths):
                return candidate
        return None

    @cached_property
    def problem_schema(self) -> dict:
        return self.document["components"]["schemas"]["Problem"]

    @staticmethod
    def is_api_path(path: str) -> bool:
        return path.startswith(API_PREFIXES)

    def violations(
        self,
        *,
        method: str,
        path: str,
        query: str,
        request_headers: dict,
        status: int,
        content_type: str,
        headers: Headers,
        body: bytes,
    ) -> str | None:
        method = method.lower()
        if method == "options" and any(key.lower() == "access-control-request-method" for key in request_headers):
            return None
        if path.rstrip("/") in NOT_OPERATIONS:
            return None
        canonical = self.canonical_path(path)
        if canonical is None:
            if not self.is_api_path(path):
                return None
            return self._undocumented_path_answer(status, content_type, body, expected=404)
        response = _Response(data=body, status_code=status, content_type=content_type, headers=headers)
        try:
            self._validate(method, canonical, query, request_headers, response)
        except (PathNotFound, ServerNotFound):
            return self._undocumented_path_answer(status, content_type, body, expected=404)
        except OperationNotFound:
            if method == "head" or not self.is_api_path(canonical):
                # HEAD is GET without a body; a page's form POST (the consent form) is no API call.
                return None
            return self._undocumented_method_answer(method, canonical, query, request_headers, response)
        except ResponseNotFound:
            return f"status {status} is not documented for this operation"
        except Exception as error:  # noqa: BLE001 - every validation error is reported the same way
            return _explain(error)
        return None

    def _validate(self, method, path, query, request_headers, response):
        request = _Request(
            host_url="http://testserver",
            path=path,
            method=method,
            parameters=RequestParameters(
                query=ImmutableMultiDict(parse_qsl(query, keep_blank_values=True)),
                header=Headers(request_headers),
                cookie=ImmutableMultiDict(),
            ),
        )
        with self._lock:
            self.openapi.validate_response(request, response)

    def _undocumented_method_answer(self, method, path, query, request_headers, response) -> str | None:
        """A method the path does not document: a 405 (or an answer given before routing: 400,
        413, 429, 503), with the body the path's operations document for that status (the OAuth
        endpoints' `OAuthError`), else a problem."""
        status = response.status_code
        if status not in (405, *BEFORE_ROUTING):
            return f"{method.upper()} is not documented here, and the answer is {status}, not 405"
        item = next(item for template, item in self.document["paths"].items() if self._matches(template, path))
        documented = [name for name, operation in item.items() if str(status) in operation.get("responses", {})]
        if not documented:
            return self._undocumented_path_answer(status, response.content_type, response.data, expected=status)
        try:
            self._validate(documented[0], path, query, request_headers, response)
        except Exception as error:  # noqa: BLE001
            return _explain(error)
        return None

    def _matches(self, template: str, path: str) -> bool:
        return any(regex.match(path) for name, regex in self._paths if name == template)

    def _undocumented_path_answer(self, status: int, content_type: str, body: bytes, *, expected: int) -> str | None:
        if status not in (expected, *BEFORE_ROUTING):
            return f"no documented operation here, and the answer is {status}, not the {expected} problem"
        if not content_type.startswith("application/problem+json"):
            return f"no documented operation here; the {status} answer is {content_type!r}, not a problem"
        problem = json.loads(body)
        missing = [key for key in self.problem_schema["required"] if key not in problem]
        extra = [key for key in problem if key not in self.problem_schema["properties"]]
        if missing or extra or problem.get("status") != status:
            return f"the {status} problem does not match `Problem` (missing {missing}, undocumented {extra})"
        return None


def _explain(error: Exception) -> str:
    """openapi-core's error with its causes (the schema errors say which key and why)."""
    lines, cause, depth = [], error, 0
    while cause is not None and depth < 5:
        schema_errors = getattr(cause, "schema_errors", ()) or ()
        if schema_errors:
            for schema_error in schema_errors:
                where = "/".join(str(part) for part in schema_error.absolute_path) or "(top level)"
                lines.append(f"  at {where}: {schema_error.message[:300]}")
        elif not lines:
            lines.append(f"{type(cause).__name__}: {str(cause)[:500]}")
        cause, depth = cause.__cause__ or cause.__context__, depth + 1
    return "\n".join(lines)


def describe(method: str, path: str, status: int, operation_path: str | None, problem: str, body: bytes) -> str:
    shown = body[:800].decode("utf-8", "replace")
    where = f"{method.upper()} {operation_path or path}"
    return (
        f"{where} answered {status}, which the OpenAPI document does not describe:\n{problem}\n"
        f"request path: {path}\nbody: {shown}"
    )


def split_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.path, parts.query
