"""The OpenAPI 3 document (drf-spectacular), made to tell the truth about the contract:

- every resource view's success bodies are the §1.2 envelopes, not the bare serializer;
- every operation lists its problem+json error responses (RFC 9457 body, `Problem` component);
- security: an `oauth2` scheme (authorization code flow) with the operation's scope, or an API key
  as a Bearer token or `?apiKey=` (an API key carries every scope);
- only the canonical `/v1/…` paths are listed (the unversioned twins are the same handlers).
"""

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent, build_parameter_type, force_instance, is_serializer
from drf_spectacular.utils import OpenApiParameter

from core.exceptions import TITLES
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
    409: "conflict with the current state",
    413: "payload_too_large: the body is over DATA_UPLOAD_MAX_MEMORY_SIZE (docs/api.md, Limits)",
    415: "unsupported_media_type: send application/json",
    429: "rate_limited: retry after the Retry-After seconds",
}

RATE_LIMIT_HEADERS = {
    "RateLimit-Limit": {"schema": {"type": "integer"}, "description": "Requests allowed per window."},
    "RateLimit-Remaining": {"schema": {"type": "integer"}, "description": "Requests left in this window."},
    "RateLimit-Reset": {
        "schema": {"type": "integer"},
        "description": "Seconds until the oldest counted request leaves the sliding one-minute window.",
    },
}

PAGINATION_SCHEMA = {
    "type": "object",
    "required": ["page", "take", "total", "hasNextPage"],
    "properties": {
        "page": {"type": "integer"},
        "take": {"type": "integer"},
        "total": {"type": "integer"},
        "hasNextPage": {"type": "boolean"},
    },
}


def only_canonical_paths(endpoints, **kwargs):
    """Preprocessing hook: drop `/<resource>` when `/v1/<resource>` is the same endpoint."""
    paths = {path for path, *_ in endpoints}
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/v1/") or f"/v1{endpoint[0]}" not in paths]


class CredentialAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "core.authentication.CredentialAuthentication"
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

    def _get_parameters(self):
        parameters = super()._get_parameters()
        if self.is_resource_viewset and getattr(self.view, "action", None) == "list":
            parameters.append(
                build_parameter_type(
                    name="userId",
                    location=OpenApiParameter.QUERY,
                    description="System administrators only: filter by user id (repeatable).",
                    schema={"type": "array", "items": {"type": "integer"}},
                    explode=True,
                    style="form",
                )
            )
        return parameters

    # --- responses -----------------------------------------------------------------------------

    def _problem_ref(self):
        component = ResolvedComponent(
            name="Problem", type=ResolvedComponent.SCHEMA, schema=PROBLEM_SCHEMA, object="core.Problem"
        )
        self.registry.register_on_missing(component)
        return component.ref

    def _envelope(self, name: str, properties: dict, required: list[str]):
        component = ResolvedComponent(
            name=name,
            type=ResolvedComponent.SCHEMA,
            schema={"type": "object", "required": required, "properties": properties},
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
                {plural: {"type": "array", "items": item}, "pagination": PAGINATION_SCHEMA},
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
        if has_path_id or self.method in ("POST", "PUT", "PATCH"):
            statuses.append(404)  # the object, or one the body refers to, is missing or hidden
        if action in getattr(self.view, "conflict_actions", ()):
            statuses.append(409)
        if self.method in ("POST", "PUT", "PATCH"):
            statuses.extend([413, 415])  # a body over DATA_UPLOAD_MAX_MEMORY_SIZE; not JSON
        return sorted(statuses)

    def _is_delete_action_with_body(self) -> bool:
        """A DELETE action of a resource (`DELETE /bookings/{id}/cancel`) declared with a serializer.

        drf-spectacular documents every such DELETE as a bodiless 204, but this API never answers
        204 (Cal.com v1 answered every success with 200): the action answers the changed object in
        its singular envelope with a `message`."""
        return (
            self.method == "DELETE"
            and self.is_resource_viewset
            and getattr(self.view, "action", None) not in STANDARD_ACTIONS
            and is_serializer(self.get_response_serializers())
        )

    def _delete_action_responses(self):
        serializer = force_instance(self.get_response_serializers())
        item = self.resolve_serializer(serializer, "response").ref
        singular = self.view.envelope_singular
        name = f"{self._get_serializer_name(serializer, 'response')}Changed"
        schema = self._envelope(name, {singular: item, "message": {"type": "string"}}, [singular, "message"])
        content = {"application/json": {"schema": schema}}
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
            if status_code in (401, 403):
                response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
            responses.setdefault(str(status_code), response)
        return responses


def strict_request_bodies(result, generator, request, public):
    """Postprocessing hook: request bodies refuse unknown fields, so the document says so."""
    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") and schema.get("type") == "object":
            schema["additionalProperties"] = False
    return result
