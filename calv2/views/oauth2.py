"""Cal.com v2's OAuth 2.0 endpoints that its MCP server, CLI and mobile app call:
`POST /v2/auth/oauth2/token` is the token endpoint of this service's OAuth provider (the same
view as `/api/auth/oauth/token`: form or JSON bodies, the RFC 6749 token answer, not the v2
envelope), and `GET /v2/auth/oauth2/clients/{clientId}` shows a client's public facts, without
credentials, as the consent screen of Cal.com's apps reads them."""

from django.http import JsonResponse
from oauth2_provider.models import Application

from accounts.oauth.selectors import client_by_client_id, client_profile
from core.exceptions import json_problem_response


def client_info(request, client_id: str):
    if request.method not in ("GET", "HEAD"):
        return json_problem_response(request, 405, "method_not_allowed", f'Method "{request.method}" not allowed.')
    application = client_by_client_id(client_id)
    if application is None:
        return json_problem_response(request, 404, "not_found", f"OAuth client with id {client_id} not found.")
    profile = client_profile(application)
    data = {
        "client_id": application.client_id,
        "redirect_uri": (application.redirect_uris.split() or [""])[0],
        "name": application.name,
        "logo": (profile.logo or None) if profile is not None else None,
        "is_trusted": bool(application.skip_authorization),
        "client_type": "PUBLIC" if application.client_type == Application.CLIENT_PUBLIC else "CONFIDENTIAL",
    }
    return JsonResponse({"status": "success", "data": data})
