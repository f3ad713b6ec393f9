"""How Django requests reach oauthlib for the token, refresh, revoke and introspect endpoints.

Form bodies are the RFC's; JSON bodies are accepted too (docs/oauth.md), and scope strings may
be comma-separated (Cal.com clients) — both are normalised here so oauthlib sees one shape.
"""

import json

from oauth2_provider.oauth2_backends import OAuthLibCore

from core.scopes import parse_scopes


class MalformedBody(ValueError):
    pass


def request_parameters(request) -> dict[str, str]:
    """The body parameters of a token-endpoint request, from a form or a JSON object."""
    content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    if content_type == "application/json":
        try:
            data = json.loads(request.body or b"{}")
        except (ValueError, UnicodeDecodeError) as error:
            raise MalformedBody("The request body is not valid JSON.") from error
        if not isinstance(data, dict):
            raise MalformedBody("The JSON body must be an object.")
        parameters = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise MalformedBody(f"The parameter '{key}' must be a string.")
            parameters[str(key)] = str(value)
    else:
        parameters = {}
        for key, values in request.POST.lists():
            # RFC 6749 §3.1/§3.2: parameters must not be sent more than once; taking one of two
            # `code`s or `client_id`s silently would let the copies disagree.
            if len(values) > 1:
                raise MalformedBody(f"The parameter '{key}' is sent more than once.")
            parameters[key] = values[0]
    if "scope" in parameters:
        parameters["scope"] = " ".join(parse_scopes(parameters["scope"]))
    return parameters


class ServiceOAuthLibCore(OAuthLibCore):
    def extract_body(self, request):
        overrides = getattr(request, "oauth_body_overrides", None)
        parameters = request_parameters(request)
        if overrides:
            parameters.update(overrides)
        return list(parameters.items())

    def extract_headers(self, request):
        headers = super().extract_headers(request)
        if getattr(request, "oauth_drop_authorization", False):
            headers.pop("Authorization", None)
            headers.pop("HTTP_AUTHORIZATION", None)
        return headers
