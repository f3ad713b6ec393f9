"""CORS for the API, so that browser apps call it directly as they called Cal.com's API v1
(docs/api.md, "Calling from a browser").

The API authenticates with `Authorization: Bearer` or `?apiKey=`, never with cookies, so any
origin may be allowed without letting a page act with a visitor's session: the answers never carry
`Access-Control-Allow-Credentials`, and the sign-in, consent, connected-apps and admin pages (the
only ones that read the session cookie) get no CORS headers at all. A preflight is answered here,
before authentication, since browsers send it without the credential (Cal.com v1 checked the key
first, so its preflights passed only with `?apiKey=` in the URL). Unlike v1, no
`Access-Control-Allow-Credentials: true`: with `*` browsers ignored it, and with a list of origins
it would let those origins send the visitor's cookies.

A small middleware rather than django-cors-headers: the rules are these few lines, and the
package's cookie-credential options are exactly what must stay off.
"""

import re
from functools import lru_cache

from django.conf import settings
from django.http import HttpResponse

ALLOWED_METHODS = "GET, POST, PATCH, DELETE, OPTIONS"
ALLOWED_HEADERS = "Authorization, Content-Type, Accept, X-Request-Id, Idempotency-Key"
EXPOSED_HEADERS = ", ".join(
    (
        "X-Request-Id",
        "Calcom-Response-ID",
        "Location",
        "Link",
        "Retry-After",
        "RateLimit-Limit",
        "RateLimit-Remaining",
        "RateLimit-Reset",
        "WWW-Authenticate",
    )
)


def cors_setting(name: str):
    return settings.CORS[name]


@lru_cache(maxsize=8)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def is_api_path(path: str) -> bool:
    return _compiled(cors_setting("PATHS")).match(path) is not None


def allowed_origin(origin: str) -> str | None:
    """The value of `Access-Control-Allow-Origin` for this origin, or None when it is not allowed."""
    origins = cors_setting("ALLOWED_ORIGINS")
    if "*" in origins:
        return "*"
    return origin if origin in origins else None


class CorsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        origin = request.headers.get("Origin")
        if not origin or not is_api_path(request.path):
            return self.get_response(request)
        allowed = allowed_origin(origin)
        is_preflight = request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers
        if is_preflight:
            # 200 with no body, as Cal.com v1 answered every OPTIONS; without the Allow-* headers
            # (an origin that is not allowed) the browser refuses the real request.
            response = HttpResponse(status=200)
            if allowed is not None:
                response["Access-Control-Allow-Methods"] = ALLOWED_METHODS
                response["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
                response["Access-Control-Max-Age"] = str(cors_setting("MAX_AGE_SECONDS"))
        else:
            response = self.get_response(request)
            if allowed is not None:
                response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        if allowed is not None:
            response["Access-Control-Allow-Origin"] = allowed
        if allowed != "*":
            # The answer depends on the Origin header: caches must keep one copy per origin.
            response["Vary"] = ", ".join(filter(None, (response.get("Vary"), "Origin")))
        return response
