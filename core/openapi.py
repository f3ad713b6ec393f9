"""The OpenAPI 3 document (drf-spectacular), made to tell the truth about the API (docs/api.md):

- every resource view's success bodies are the envelopes, not the bare serializer;
- every operation lists its problem+json error responses (RFC 9457 body, `Problem` component);
- security: an `oauth2` scheme (authorization code flow) with the operation's scope, or an API key
  as a Bearer token or `?apiKey=` (an API key carries every scope);
- only the canonical `/v1/…` paths are listed (the unversioned twins are the same handlers).

The document is built purely: every schema taken from a module-level constant is registered as a
deep copy, and the last hook detaches the whole result, because drf-spectacular's enum hook
rewrites registered schemas in place (an inline enum becomes a `$ref` to a new `…Enum` component).
Registering a constant itself would make the second build refer to a component it never emits.
"""

import copy

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent, build_parameter_type, force_instance, is_serializer
from drf_spectacular.utils import OpenApiParameter

from core.exceptions import TITLES
from core.idempotency import HEADER as IDEMPOTENCY_HEADER
from core.idempotency import KEY_MAX_LENGTH, REPLAYED_HEADER, WRITE_METHODS, IdempotentWritesMixin
from core.pagination import PAGINATION_SCHEMA
from core.query import USER_IDS
from core.viewsets import ResourceViewSet

PROBLEM_MEDIA_TYPE = "application/problem+json"
STANDARD_ACTIONS = ("list", "retrieve", "create", "partial_update", "destroy")

PROBLEM_SCHEMA = {
    "type": "object",
    "description": "RFC 9457 problem details; `message` repeats `detail` for Cal.com v1 clients.",
    "required": ["status", "code", "title", "detail", "message", "requestId"],
    "properties": {
        "status": {"type": "integer"},
        "code": {"type": "string", "enum": sorted(TITLES)},
        "title": {"type": "string"},
        "detail": {"type": "string"},
        "message": {"type": "string"},
        "requestId": {"type": "string", "nullable": True},
        "errors": {
            "type": "object",
            "description": "Validation errors by field (`availability[2].startTime`).",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
}

ERROR_DESCRIPTIONS = {
    400: "validation_error (`errors` names each bad field or query parameter) or malformed_request",
    401: "not_authenticated or invalid_token (with WWW-Authenticate)",
    403: "insufficient_scope (with WWW-Authenticate naming the scope) or permission_denied",
    404: "not_found: the object (or one the body refers to) does not exist or the caller may not see it",
    409: "conflict with the current state, or idempotency_key_in_use: a request with the same Idempotency-Key "
    "is still running (retry after the Retry-After seconds)",
    422: "idempotency_key_reused: this Idempotency-Key was used for another method, path or body",
    413: "payload_too_large: the body is over DATA_UPLOAD_MAX_MEMORY_SIZE (docs/api.md, Limits)",
    414: "uri_too_long: the request line (method, path and query string) is over 4094 bytes; answered by "
    "the server before the application (docs/operations.md)",
    415: "unsupported_media_type: send application/json",
    429: "rate_limited: retry after the Retry-After seconds",
    500: "server_error: an unexpected failure on our side (a defect, logged with the request id); a keyed "
    "write's answer is not stored, so a retry with the same Idempotency-Key runs again",
    503: "service_unavailable: the database cannot be reached; retry after the Retry-After seconds",
}

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    type={"type": "string", "minLength": 1, "maxLength": KEY_MAX_LENGTH, "pattern": "^[\\x20-\\x7E]+$"},
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "Makes a retry of this write safe (docs/api.md, Retrying writes safely): the first request with a key "
        "runs and its answer is stored for 24 hours; a repeat with the same key, method, path and body gets that "
        "answer again with `Idempotent-Replayed: true` and runs nothing. Scoped to the caller's user."
    ),
)

REPLAYED_HEADERS = {
    REPLAYED_HEADER: {
        "schema": {"type": "string", "enum": ["true"]},
        "description": "Present when this is the stored answer of an earlier request with the same Idempotency-Key.",
    }
}

RATE_LIMIT_HEADERS = {
    "RateLimit-Limit": {"schema": {"type": "integer"}, "description": "Requests allowed per window."},
    "RateLimit-Remaining": {"schema": {"type": "integer"}, "description": "Requests left in this window."},
    "RateLimit-Reset": {
        "schema": {"type": "integer"},
        "description": "Seconds until the oldest counted request leaves the sliding one-minute window.",
    },
}


def only_canonical_paths(endpoints, **kwargs):
    """Preprocessing hook: drop `/<resource>` when `/v1/<resource>` is the same endpoint."""
    paths = {path for path, *_ in endpoints}
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/v1/") or f"/v1{endpoint[0]}" not in paths]


class CredentialAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.CredentialAuthentication"
    name = ["oauth2", "apiKeyBearer", "apiKeyQuery"]

    def get_security_definition(self, auto_schema):
        return [
            {
                "type": "oauth2",
                "description": "OAuth 2.0 access token, sent as `Authorization: Bearer <token>`.",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "/auth/oauth2/authorize",
                        "tokenUrl": "/api/auth/oauth/token",
                        "refreshUrl": "/api/auth/oauth/refreshToken",
                        "scopes": dict(settings.SCOPES),
                    }
                },
            },
            {
                "type": "http",
                "scheme": "bearer",
                "description": f"API key (`{settings.API_KEY_PREFIX}…`) as a Bearer token; it has every scope.",
            },
            {"type": "apiKey", "in": "query", "name": "apiKey", "description": "API key in the query (Cal.com v1)."},
        ]

    def get_security_requirement(self, auto_schema):
        scope = auto_schema.required_scope()
        return [{"oauth2": [scope] if scope else []}, {"apiKeyBearer": []}, {"apiKeyQuery": []}]


class ResourceAutoSchema(AutoSchema):
    def required_scope(self) -> str | None:
        scopes = getattr(self.view, "scopes", None) or {}
        return scopes.get("GET" if self.method in ("HEAD", "OPTIONS") else self.method)

    @property
    def is_resource_viewset(self) -> bool:
        return isinstance(self.view, ResourceViewSet)

    def get_description(self):
        description = super().get_description() or ""
        scope = self.required_scope()
        if scope:
            description = f"{description}\n\nRequired scope: `{scope}` (an API key has every scope).".strip()
        return description

    def get_extensions(self):
        extensions = super().get_extensions() or {}
        scope = self.required_scope()
        if scope:
            extensions = {**extensions, "x-required-scope": scope}
        return extensions

    # --- parameters ----------------------------------------------------------------------------

    def _resolve_path_parameters(self, variables):
        if not self.is_resource_viewset:
            return super()._resolve_path_parameters(variables)
        view = self.view
        lookup_kwarg = view.lookup_url_kwarg or view.lookup_field
        declared = type(view).lookup_schema is not ResourceViewSet.lookup_schema
        parameters = []
        for variable in variables:
            is_lookup = variable == lookup_kwarg or (lookup_kwarg == "pk" and variable == "id")  # SCHEMA_COERCE_PATH_PK
            if is_lookup and (declared or view.lookup_value_regex == ResourceViewSet.lookup_value_regex):
                schema = dict(view.lookup_schema)
                parameters.append(build_parameter_type(name=variable, location=OpenApiParameter.PATH, schema=schema))
            else:
                parameters.extend(super()._resolve_path_parameters([variable]))
        return parameters

    def _takes_idempotency_key(self) -> bool:
        return self.method in WRITE_METHODS and isinstance(self.view, IdempotentWritesMixin)

    def get_override_parameters(self):
        """A list's query parameters come from their one declaration (core.query): the view's
        `list_filters`, and `userId` of the lists that take it (`filters_by_user`)."""
        parameters = super().get_override_parameters()
        if self.is_resource_viewset and getattr(self.view, "action", None) == "list":
            parameters = [*parameters, *self.view.list_filters.openapi_parameters()]
            if self.view.filters_by_user:
                parameters = [*parameters, USER_IDS.openapi_parameter("userId")]
        if self._takes_idempotency_key():
            parameters = [*parameters, IDEMPOTENCY_PARAMETER]
        return parameters

    # --- responses -----------------------------------------------------------------------------

    def _map_basic_serializer(self, serializer, direction):
        """drf-spectacular marks every read-only field required in an answer. A read-only field
        declared with `required=False` is a key the answer may leave out (`paymentUid` of an
        unpaid booking), so it is documented as optional; every other key stays required."""
        schema = super()._map_basic_serializer(serializer, direction)
        optional = {
            name
            for name, field in serializer.fields.items()
            if field.read_only and getattr(field, "_kwargs", {}).get("required") is False
        }
        if optional and "required" in schema:
            schema["required"] = [name for name in schema["required"] if name not in optional]
            if not schema["required"]:
                del schema["required"]
        return schema

    def _is_create_operation(self):
        """Never: a create answers 200, as Cal.com v1 did (core.viewsets), so a POST declared with
        a bare serializer is documented as 200, not as drf-spectacular's default 201."""
        return False

    def _problem_ref(self):
        component = ResolvedComponent(
            name="Problem", type=ResolvedComponent.SCHEMA, schema=copy.deepcopy(PROBLEM_SCHEMA), object="core.Problem"
        )
        self.registry.register_on_missing(component)
        return component.ref

    def _envelope(self, name: str, properties: dict, required: list[str]):
        component = ResolvedComponent(
            name=name,
            type=ResolvedComponent.SCHEMA,
            schema=copy.deepcopy({"type": "object", "required": required, "properties": properties}),
            object=f"core.envelope.{name}",
        )
        self.registry.register_on_missing(component)
        return component.ref

    def _resource_success_responses(self):
        view, action = self.view, self.view.action
        serializer = view.serializer_class(context={})
        component = self.resolve_serializer(serializer, "response")
        item = component.ref
        base = self._get_serializer_name(serializer, "response")
        singular, plural = view.envelope_singular, view.envelope_plural
        message = {"type": "string"}

        def ok(schema, description="", headers=None):
            return {
                "description": description,
                "headers": {**RATE_LIMIT_HEADERS, **(headers or {})},
                "content": {"application/json": {"schema": schema}},
            }

        if action == "list":
            schema = self._envelope(
                f"{base}List",
                {
                    plural: {"type": "array", "items": item},
                    "pagination": getattr(view.pagination_class, "schema", PAGINATION_SCHEMA),
                },
                [plural, "pagination"],
            )
            link = {"Link": {"schema": {"type": "string"}, "description": 'rel="next" / rel="prev" pages.'}}
            return {"200": ok(schema, headers=link)}
        if action == "create":
            schema = self._envelope(f"{base}Created", {singular: item, "message": message}, [singular, "message"])
            location = {"Location": {"schema": {"type": "string"}, "description": "URL of the new object."}}
            return {"200": ok(schema, headers=location)}
        if action == "destroy":
            return {"200": ok(self._envelope("Deleted", {"message": message}, ["message"]))}
        return {"200": ok(self._envelope(f"{base}Envelope", {singular: item}, [singular]))}

    def _error_statuses(self) -> list[int]:
        # 400 on every operation: a NUL anywhere in a query string is refused before any view runs.
        statuses = [400, 401, 403, 429]
        has_path_id = "{" in self.path
        action = getattr(self.view, "action", None)
        # The object, or one the body or the query refers to (`GET /slots?eventTypeId=`), is
        # missing or hidden.
        refers = getattr(self.view, "query_refers_to_objects", False)
        if has_path_id or self.method in ("POST", "PUT", "PATCH") or refers:
            statuses.append(404)
        if action in getattr(self.view, "conflict_actions", ()) or self._takes_idempotency_key():
            statuses.append(409)
        if self._takes_idempotency_key():
            statuses.append(422)
        if self.method in ("POST", "PUT", "PATCH"):
            statuses.extend([413, 415])  # a body over DATA_UPLOAD_MAX_MEMORY_SIZE; not JSON
        statuses.append(414)  # any operation: a request line over gunicorn's limit_request_line
        statuses.append(500)  # any operation can meet a defect; the body is still a problem
        statuses.append(503)  # any operation, while PostgreSQL is unreachable (docs/operations.md)
        return sorted(statuses)

    def _is_delete_action_with_body(self) -> bool:
        """A DELETE of a resource declared with its own answer serializer (`DELETE /bookings/{id}`
        and `DELETE /bookings/{id}/cancel` answer Cal.com v1's cancellation body).

        drf-spectacular documents every such DELETE as a bodiless 204, but this API never answers
        204 (Cal.com v1 answered every success with 200): the declared serializer is the answer."""
        return (
            self.method == "DELETE"
            and self.is_resource_viewset
            and not self._uses_envelopes()
            and is_serializer(self.get_response_serializers())
        )

    def _delete_action_responses(self):
        serializer = force_instance(self.get_response_serializers())
        content = {"application/json": {"schema": self.resolve_serializer(serializer, "response").ref}}
        return {"200": {"description": "", "headers": dict(RATE_LIMIT_HEADERS), "content": content}}

    def _uses_envelopes(self) -> bool:
        """A standard action of a ResourceViewSet whose responses no @extend_schema overrides."""
        if not (
            self.is_resource_viewset
            and getattr(self.view, "serializer_class", None) is not None
            and getattr(self.view, "action", None) in STANDARD_ACTIONS
        ):
            return False
        # @extend_schema always subclasses the schema, so compare what it returns with the default.
        declared = self.get_response_serializers()
        return not isinstance(declared, dict) and type(declared) is type(self._get_serializer())

    def _get_response_bodies(self, direction="response"):
        if self._uses_envelopes():
            responses = self._resource_success_responses()
        elif self._is_delete_action_with_body():
            responses = self._delete_action_responses()
        else:
            responses = super()._get_response_bodies(direction)
        problem = self._problem_ref()
        for status_code in self._error_statuses():
            response = {
                "description": ERROR_DESCRIPTIONS[status_code],
                "content": {PROBLEM_MEDIA_TYPE: {"schema": problem}},
            }
            if status_code == 429:
                response["headers"] = {"Retry-After": {"schema": {"type": "integer"}}, **RATE_LIMIT_HEADERS}
            if status_code == 503:
                response["headers"] = {"Retry-After": {"schema": {"type": "integer"}}}
            if status_code in (401, 403):
                response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
            if status_code == 409 and self._takes_idempotency_key():
                response["headers"] = {
                    "Retry-After": {"schema": {"type": "integer"}, "description": "On idempotency_key_in_use."}
                }
            responses.setdefault(str(status_code), response)
        if self._takes_idempotency_key():
            # Stored answers (successes and 4xx) come back with the header when replayed.
            for status_code, response in responses.items():
                if int(status_code) < 500:
                    response["headers"] = {**response.get("headers", {}), **REPLAYED_HEADERS}
        return responses


def strict_request_bodies(result, generator, request, public):
    """Postprocessing hook: request bodies refuse unknown fields, so the document says so."""
    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") and schema.get("type") == "object":
            schema["additionalProperties"] = False
    return result


def resource_links(result, generator, request, public):
    """Postprocessing hook: OpenAPI links from each create to what can be done with the object it
    made (get, update, delete or cancel it), so clients and tools can follow a lifecycle."""
    paths = result.get("paths", {})
    schemas = result.get("components", {}).get("schemas", {})
    for path, item in paths.items():
        item_path = f"{path}/{{id}}"
        created = item.get("post", {}).get("responses", {}).get("200", {})
        if item_path not in paths or "application/json" not in created.get("content", {}):
            continue
        pointer, id_type = _created_id(created["content"]["application/json"]["schema"], schemas)
        parameters = paths[item_path].get("get", {}).get("parameters", [])
        path_id_type = next(
            (parameter["schema"].get("type") for parameter in parameters if parameter["name"] == "id"), None
        )
        # A membership's path id is `{userId}_{teamId}`, not its `id`: no link can build it.
        if pointer is None or id_type != path_id_type:
            continue
        targets = {
            f"{method}{suffix}": operation["operationId"]
            for suffix, target in (("", item_path), ("Cancel", f"{item_path}/cancel"))
            for method, operation in paths.get(target, {}).items()
            if method in ("get", "patch", "delete") and "operationId" in operation
        }
        verbs = {"get": "Get", "patch": "Update", "delete": "Delete", "deleteCancel": "Cancel"}
        created["links"] = {
            f"{verbs[key]}Created": {
                "operationId": operation_id,
                "parameters": {"id": f"$response.body#{pointer}"},
                "description": f"{verbs[key]} the object this call created.",
            }
            for key, operation_id in targets.items()
            if key in verbs
        }
    return result


def _created_id(schema: dict, schemas: dict) -> tuple[str | None, str | None]:
    """Where a create's answer holds the new object's id, and the id's type: `/id` (a booking, at
    the top level, as Cal.com v1 answered) or `/<singular>/id` (the envelope)."""

    def component(reference: dict) -> dict:
        return schemas.get(reference.get("$ref", "").rsplit("/", 1)[-1], {})

    body = component(schema)
    properties = body.get("properties", {})
    if "id" in properties:
        return "/id", properties["id"].get("type")
    objects = [key for key in body.get("required", []) if key != "message" and "$ref" in properties.get(key, {})]
    if len(objects) != 1:
        return None, None
    identifier = component(properties[objects[0]]).get("properties", {}).get("id", {})
    return f"/{objects[0]}/id", identifier.get("type")


def _detached(value):
    """A copy of the document's tree with no dict or list shared between two places (unlike
    copy.deepcopy, which keeps the sharing it copies)."""
    if isinstance(value, dict):
        return {key: _detached(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_detached(item) for item in value]
    return value


def detached_document(result, generator, request, public):
    """Postprocessing hook, the last: the document detached from every module-level constant, with
    no object shared between two places, so a consumer that edits it cannot change the next build,
    and YAML has no aliases."""
    return _detached(result)
