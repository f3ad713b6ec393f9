"""The OAuth 2.0 provider's endpoints in the OpenAPI document (a postprocessing hook).

The OAuth views are plain Django views answering RFC 6749 bodies, not problem+json, so
drf-spectacular does not see them; this module describes them from what `accounts.oauth.views`
answers, beside the code it documents.
"""

import copy

from django.conf import settings

from core.openapi import ERROR_DESCRIPTIONS, PROBLEM_MEDIA_TYPE

OAUTH_ERRORS = {
    "invalid_request": "a parameter is missing, repeated or malformed (also a JSON body that does not parse)",
    "invalid_client": "client authentication failed: unknown client, wrong secret, suspended client",
    "invalid_grant": "unknown, expired or used code or refresh token; redirect_uri differs; PKCE verifier wrong",
    "unsupported_grant_type": "only authorization_code and refresh_token",
    "invalid_scope": "the scope asked for is unknown or beyond what was granted",
    "unsupported_token_type": "the token type cannot be revoked",
}

OAUTH_SCHEMAS = {
    "OAuthError": {
        "type": "object",
        "description": "RFC 6749 §5.2 error body (the OAuth endpoints do not answer problem+json).",
        "required": ["error", "error_description"],
        "properties": {
            "error": {"type": "string", "enum": list(OAUTH_ERRORS)},
            "error_description": {"type": "string"},
        },
    },
    "OAuthTokenRequest": {
        "type": "object",
        "required": ["grant_type"],
        "properties": {
            "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]},
            "code": {"type": "string", "description": "authorization_code: the code from the redirect."},
            "redirect_uri": {
                "type": "string",
                "description": "authorization_code: the redirect_uri of the authorize request, exactly.",
            },
            "code_verifier": {"type": "string", "description": "authorization_code with PKCE: the verifier."},
            "refresh_token": {"type": "string", "description": "refresh_token: the current refresh token."},
            "scope": {"type": "string", "description": "refresh_token: narrow the grant (space-separated)."},
            "client_id": {"type": "string", "description": "Client authentication in the body, or the public client."},
            "client_secret": {"type": "string", "description": "Client authentication in the body (or HTTP Basic)."},
        },
    },
    "OAuthRefreshRequest": {
        "type": "object",
        "properties": {
            "grant_type": {"type": "string", "enum": ["refresh_token"], "description": "May be left out."},
            "refresh_token": {
                "type": "string",
                "description": "Or send it as `Authorization: Bearer <refresh_token>`; the body wins if both.",
            },
            "scope": {"type": "string", "description": "Narrow the grant (space-separated)."},
            "client_id": {"type": "string"},
            "client_secret": {"type": "string"},
        },
    },
    "OAuthTokenRevokeRequest": {
        "type": "object",
        "required": ["token"],
        "properties": {
            "token": {"type": "string"},
            "token_type_hint": {"type": "string", "enum": ["access_token", "refresh_token"]},
            "client_id": {"type": "string"},
            "client_secret": {"type": "string"},
        },
    },
    "OAuthTokens": {
        "type": "object",
        "required": ["access_token", "refresh_token", "token_type", "expires_in", "scope"],
        "properties": {
            "access_token": {"type": "string"},
            "refresh_token": {"type": "string", "description": "Rotated on every refresh."},
            "token_type": {"type": "string", "enum": ["Bearer"]},
            "expires_in": {"type": "integer", "description": "Seconds the access token lives (default 1800)."},
            "scope": {"type": "string", "description": "Granted scopes, space-separated."},
        },
    },
    "OAuthIntrospection": {
        "type": "object",
        "required": ["active"],
        "description": 'Anything but an active token of the calling client is `{"active": false}`.',
        "properties": {
            "active": {"type": "boolean"},
            "scope": {"type": "string"},
            "client_id": {"type": "string"},
            "username": {"type": "string"},
            "sub": {"type": "string"},
            "token_type": {
                "type": "string",
                "enum": ["Bearer", "refresh_token"],
                "description": "`Bearer` for an access token, `refresh_token` for a refresh token.",
            },
            "iat": {"type": "integer"},
            "exp": {"type": "integer"},
        },
    },
    "OAuthServerMetadata": {
        "type": "object",
        "description": "RFC 8414 authorization server metadata: exactly what this server supports.",
        "required": ["issuer", "authorization_endpoint", "token_endpoint", "scopes_supported"],
        "properties": {
            "issuer": {"type": "string"},
            "authorization_endpoint": {"type": "string"},
            "token_endpoint": {"type": "string"},
            "revocation_endpoint": {"type": "string"},
            "introspection_endpoint": {"type": "string"},
            "scopes_supported": {"type": "array", "items": {"type": "string"}},
            "response_types_supported": {"type": "array", "items": {"type": "string"}},
            "response_modes_supported": {"type": "array", "items": {"type": "string"}},
            "grant_types_supported": {"type": "array", "items": {"type": "string"}},
            "code_challenge_methods_supported": {"type": "array", "items": {"type": "string"}},
            "token_endpoint_auth_methods_supported": {"type": "array", "items": {"type": "string"}},
            "revocation_endpoint_auth_methods_supported": {"type": "array", "items": {"type": "string"}},
            "introspection_endpoint_auth_methods_supported": {"type": "array", "items": {"type": "string"}},
        },
    },
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _oauth_body(schema: str) -> dict:
    # One media type: generated clients (openapi-python-client) emit code that does not import for
    # a body offered in two. JSON is accepted all the same, and the description says so.
    return {
        "required": True,
        "description": (
            "Form-encoded (RFC 6749). The same fields as a JSON object (`Content-Type: application/json`) "
            "are accepted too."
        ),
        "content": {"application/x-www-form-urlencoded": {"schema": _ref(schema)}},
    }


def _oauth_error(description: str, *, challenge: bool = False) -> dict:
    response = {"description": description, "content": {"application/json": {"schema": _ref("OAuthError")}}}
    if challenge:
        response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}, "description": 'Basic realm="oauth"'}}
    return response


NO_STORE = {"Cache-Control": {"schema": {"type": "string"}, "description": "no-store"}}
CLIENT_AUTHENTICATION = [{"oauthClientBasic": []}, {}]
POST_ONLY = _oauth_error("invalid_request: any method but POST (with `Allow: POST`)")


def _token_responses() -> dict:
    return {
        "200": {
            "description": "Tokens. The refresh token is rotated: the one sent stops working.",
            "headers": NO_STORE,
            "content": {"application/json": {"schema": _ref("OAuthTokens")}},
        },
        "400": _oauth_error("invalid_request, invalid_grant, unsupported_grant_type or invalid_scope"),
        "401": _oauth_error("invalid_client", challenge=True),
        "405": POST_ONLY,
    }


def _authorize_operation() -> dict:
    def query(name, description, required=False, schema=None):
        return {
            "name": name,
            "in": "query",
            "required": required,
            "description": description,
            "schema": schema or {"type": "string"},
        }

    return {
        "operationId": "oauth_authorize",
        "tags": ["oauth"],
        "summary": "Step 1: ask the user to authorize the client (a page in the user's browser)",
        "description": (
            "Open this URL in the user's browser. Not signed in: the sign-in page (naming the app and its "
            "redirect host), then back here. Then the consent page (app logo, name and link, redirect host, "
            "account, one line per scope) with Allow and Deny; skipped when the user already allowed this "
            "client every requested scope and still holds a live token of it (`approval_prompt=force` shows "
            "it anyway). Allow redirects (302) to `redirect_uri?code=…&state=…`; the code lives at "
            "most 10 minutes and is single-use. Deny redirects with `error=access_denied&state=…`. "
            "A bad scope redirects with `error=invalid_scope`; a public client without PKCE, or `plain` "
            "PKCE, with `error=invalid_request`. An unknown client or a redirect_uri that is not "
            "registered exactly is a 400 error page, never a redirect."
        ),
        "security": [],
        "parameters": [
            query("client_id", "The client's id.", required=True),
            query(
                "redirect_uri",
                "Must equal a registered redirect URI exactly; may be left out if the client has exactly one.",
            ),
            query("state", "Echoed back verbatim on the redirect."),
            query(
                "scope",
                "Space- or comma-separated scopes within the client's ceiling; absent means READ_PROFILE.",
            ),
            query("response_type", "Only `code` (absent means `code`).", schema={"type": "string", "enum": ["code"]}),
            query("code_challenge", "PKCE (RFC 7636): BASE64URL(SHA-256(code_verifier)). Required for public clients."),
            query("code_challenge_method", "PKCE method.", schema={"type": "string", "enum": ["S256"]}),
            query(
                "approval_prompt",
                "`force` shows the consent page even to a client already allowed these scopes; `auto` "
                "(the default) skips it then.",
                schema={"type": "string", "enum": ["auto", "force"]},
            ),
        ],
        "responses": {
            "200": {
                "description": "The consent page (HTML).",
                "content": {"text/html": {"schema": {"type": "string"}}},
            },
            "302": {
                "description": (
                    "To the sign-in page (not signed in), or to `redirect_uri` with `error` and `state` "
                    "(invalid_scope, invalid_request, unsupported_response_type), or with `code` and `state` "
                    "when the user already allowed this client these scopes."
                ),
                "headers": {"Location": {"schema": {"type": "string"}}},
            },
            "400": {
                "description": "Unknown or suspended client, or an unregistered redirect_uri: an error page; "
                "a NUL in the query string: a problem.",
                "content": {
                    "text/html": {"schema": {"type": "string"}},
                    PROBLEM_MEDIA_TYPE: {"schema": _ref("Problem")},
                },
            },
        },
    }


def _authorize_alias_operation() -> dict:
    """The authorize page where self-hosted integrations look for it, beside the token endpoint."""
    return {
        **_authorize_operation(),
        "operationId": "oauth_authorize_alias",
        "summary": "Step 1 at an alias: the same as GET /auth/oauth2/authorize",
        "description": (
            "The authorize page of `GET /auth/oauth2/authorize`, answered identically here (beside the token "
            "endpoint, where Zapier private apps and other self-hosted integrations look for it) and at "
            "`/oauth/authorize`. The token, revoke and introspect endpoints also answer at `/oauth/token`, "
            "`/oauth/revoke` and `/oauth/introspect`. The server metadata names the primary paths."
        ),
    }


def _oauth_paths() -> dict:
    return {
        "/auth/oauth2/authorize": {"get": _authorize_operation()},
        "/api/auth/oauth/authorize": {"get": _authorize_alias_operation()},
        "/api/auth/oauth/token": {
            "post": {
                "operationId": "oauth_token",
                "tags": ["oauth"],
                "summary": "Step 2: exchange the authorization code (or a refresh token) for tokens",
                "description": (
                    "Client authentication: HTTP Basic (`client_secret_basic`) or `client_id` + `client_secret` "
                    "in the body; a public client sends only `client_id` and must have used PKCE. "
                    "A replayed code is refused and every token issued from it is revoked."
                ),
                "security": CLIENT_AUTHENTICATION,
                "requestBody": _oauth_body("OAuthTokenRequest"),
                "responses": _token_responses(),
            }
        },
        "/api/auth/oauth/refreshToken": {
            "post": {
                "operationId": "oauth_refresh_token",
                "tags": ["oauth"],
                "summary": "Step 3: refresh (Cal.com style): a new access token and a rotated refresh token",
                "description": (
                    "The refresh token comes as `refresh_token` in the body or as "
                    "`Authorization: Bearer <refresh_token>` (then the client authenticates in the body). "
                    "Presenting an already-rotated refresh token revokes the whole token family. Refresh "
                    "tokens expire after 90 idle days."
                ),
                "security": CLIENT_AUTHENTICATION,
                "requestBody": _oauth_body("OAuthRefreshRequest"),
                "responses": _token_responses(),
            }
        },
        "/api/auth/oauth/revoke": {
            "post": {
                "operationId": "oauth_revoke",
                "tags": ["oauth"],
                "summary": "Revoke an access or refresh token (RFC 7009)",
                "description": (
                    "Revoking an access token also revokes its refresh token; revoking a refresh token revokes "
                    "its family. 200 with an empty body, also for unknown tokens and other clients' tokens."
                ),
                "security": CLIENT_AUTHENTICATION,
                "requestBody": _oauth_body("OAuthTokenRevokeRequest"),
                "responses": {
                    "200": {"description": "Revoked (or nothing to revoke); empty body.", "headers": NO_STORE},
                    "400": _oauth_error("invalid_request or unsupported_token_type"),
                    "401": _oauth_error("invalid_client", challenge=True),
                    "405": POST_ONLY,
                },
            }
        },
        "/api/auth/oauth/introspect": {
            "post": {
                "operationId": "oauth_introspect",
                "tags": ["oauth"],
                "summary": "Introspect one of the calling client's tokens (RFC 7662; confidential clients)",
                "security": [{"oauthClientBasic": []}, {}],
                "requestBody": _oauth_body("OAuthTokenRevokeRequest"),
                "responses": {
                    "200": {
                        "description": "The token's state.",
                        "headers": NO_STORE,
                        "content": {"application/json": {"schema": _ref("OAuthIntrospection")}},
                    },
                    "400": _oauth_error("invalid_request: no token"),
                    "401": _oauth_error("invalid_client (public clients may not introspect)", challenge=True),
                    "405": POST_ONLY,
                },
            }
        },
        "/.well-known/oauth-authorization-server": {
            "get": {
                "operationId": "oauth_metadata",
                "tags": ["oauth"],
                "summary": "Authorization server metadata (RFC 8414)",
                "security": [],
                "responses": {
                    "200": {
                        "description": "Endpoints, grants, scopes and PKCE methods that work here.",
                        "content": {"application/json": {"schema": _ref("OAuthServerMetadata")}},
                    }
                },
            }
        },
    }


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


def oauth_reference(result, generator, request, public):
    """Postprocessing hook: the OAuth endpoints, how to get a token and how to use an API key."""
    oauth_paths = _oauth_paths()
    result.setdefault("paths", {}).update(oauth_paths)
    for item in oauth_paths.values():
        for method, operation in item.items():
            # A NUL in any query string is refused before any view runs, on every path.
            operation["responses"].setdefault(
                "400",
                {
                    "description": "malformed_request or validation_error: a NUL in the query string",
                    "content": {PROBLEM_MEDIA_TYPE: {"schema": _ref("Problem")}},
                },
            )
            if method == "post":  # the body is read against the same size limit as the API's
                operation["responses"].setdefault(
                    "413",
                    {
                        "description": ERROR_DESCRIPTIONS[413],
                        "content": {PROBLEM_MEDIA_TYPE: {"schema": _ref("Problem")}},
                    },
                )
    me = result["paths"].get("/api/auth/oauth/me", {}).get("get")
    if me:
        me["summary"] = "Who the access token acts for"
        me["responses"]["200"]["description"] = "The token's user."
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(copy.deepcopy(OAUTH_SCHEMAS))
    schemes = components.setdefault("securitySchemes", {})
    schemes["oauthClientBasic"] = {
        "type": "http",
        "scheme": "basic",
        "description": "OAuth client authentication: client_id and client_secret as HTTP Basic (RFC 6749 §2.3.1).",
    }
    if "oauth2" in schemes:
        flow = schemes["oauth2"]["flows"]["authorizationCode"]
        flow["authorizationUrl"] = _absolute(request, "/auth/oauth2/authorize")
        flow["tokenUrl"] = _absolute(request, "/api/auth/oauth/token")
        flow["refreshUrl"] = _absolute(request, "/api/auth/oauth/refreshToken")
        schemes["oauth2"]["description"] = (
            "OAuth 2.0 access token as `Authorization: Bearer <token>` (never in the query string). Get one "
            "with the authorization code flow: send the user to the authorize URL (with PKCE: "
            "`code_challenge` = BASE64URL(SHA-256(verifier)), `code_challenge_method=S256`; required for "
            "public clients), exchange the code at the token URL (with `code_verifier`), and refresh at the "
            "refresh URL. Clients are registered by the operator. Each scope is listed with what it grants; "
            "`WRITE_X` implies `READ_X`."
        )
    if "apiKeyBearer" in schemes:
        schemes["apiKeyBearer"]["description"] = (
            f"API key (`{settings.API_KEY_PREFIX}…`) as `Authorization: Bearer <key>`; it acts as its user "
            "with every scope. Operators create keys in the admin or with `manage.py createapikey`."
        )
    if "apiKeyQuery" in schemes:
        schemes["apiKeyQuery"]["description"] = (
            "The same API key as `?apiKey=<key>` (Cal.com v1 clients). OAuth access tokens are refused here."
        )
    tags = result.setdefault("tags", [])
    if not any(tag.get("name") == "oauth" for tag in tags):
        tags.append({"name": "oauth", "description": "OAuth 2.0 provider: authorize, tokens, revocation, metadata."})
    return result
