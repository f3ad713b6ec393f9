"""The v2 operations, one module per resource (`base` is what they share): each reads its input
(query or body, Cal.com's names), calls this service's selectors and services, and writes the
answer in the shape the request's `cal-api-version` selects (calv2.shapes). No rule of the domain
is written here; an error raised by a service becomes the v2 error envelope at the edge
(calv2.wire).

    request ─▶ V2View (auth, scopes, rate limit: core's) ─▶ calv2.inputs / core.query
            ─▶ scheduling / webhooks / accounts services and selectors
            ─▶ calv2.shapes (by version) ─▶ {"status": "success", "data": …}
"""
