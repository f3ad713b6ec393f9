"""The demo OAuth client's redirect URI (`/demo/callback`, registered by `seed_demo`).

After Allow on the consent page the browser lands here with `code` and `state`; the page shows the
ready `curl` command that exchanges the code, so the walk-through needs no client of its own. It
exists only while the demo client does (a deployment that never ran `seed_demo` answers 404), and
the demo client's credentials are public by design (docs/operations.md).
"""

from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from oauth2_provider.models import Application

from demo.management.commands.seed_demo import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET


@never_cache
@require_GET
def demo_callback(request):
    if not Application.objects.filter(client_id=DEMO_CLIENT_ID).exists():
        raise Http404("The demo OAuth client is not registered here.")
    redirect_uri = request.build_absolute_uri(request.path)
    context = {
        "code": request.GET.get("code", ""),
        "state": request.GET.get("state", ""),
        "error": request.GET.get("error", ""),
        "error_description": request.GET.get("error_description", ""),
        "client_id": DEMO_CLIENT_ID,
        "client_secret": DEMO_CLIENT_SECRET,
        "redirect_uri": redirect_uri,
        "token_url": request.build_absolute_uri(reverse("oauth-token")),
        "api_url": request.build_absolute_uri("/v1/me"),
    }
    response = render(request, "demo/callback.html", context, status=200 if context["code"] else 400)
    # The code is a credential for ten minutes: it must not leave in a Referer header.
    response["Referrer-Policy"] = "no-referrer"
    return response
