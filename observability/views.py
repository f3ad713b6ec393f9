from django.conf import settings
from django.http import HttpResponse

from core.client_address import address_in, client_address
from core.exceptions import json_problem_response
from core.views import read_only_probe


@read_only_probe
def metrics(request):
    """Prometheus' scrape: this instance's metrics (all its gunicorn workers). 404 unless
    METRICS_ENABLED; 403 from an address outside METRICS_ALLOWED_CIDRS (private networks and
    loopback by default: a public client never reads it, even through the proxy)."""
    if not settings.METRICS_ENABLED:
        return json_problem_response(request, 404, "not_found", "There is nothing at this path.")
    if not address_in(client_address(request), settings.METRICS_ALLOWED_CIDRS):
        return json_problem_response(request, 403, "permission_denied", "You do not have permission to do this.")
    from observability.metrics import exposition

    body, content_type = exposition()
    return HttpResponse(body, content_type=content_type)
