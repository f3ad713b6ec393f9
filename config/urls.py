"""Resource endpoints answer at /v1/<resource> (canonical) and at /<resource> (Cal.com v1 paths; docs/api.md)."""

from django.contrib import admin
from django.urls import include, path, re_path

from core import views as core_views
from demo import views as demo_views

resource_urls = [
    path("", include("accounts.urls")),
    path("", include("scheduling.urls_schedules")),
    path("", include("scheduling.urls_bookings")),
    path("", include("payments.urls")),
    path("", include("webhooks.urls")),
    path("", include("calendars.urls")),
]

urlpatterns = [
    path("healthz", core_views.healthz, name="healthz"),
    path("readyz", core_views.readyz, name="readyz"),
    path("", include("observability.urls")),  # /metrics (404 unless METRICS_ENABLED)
    # First, so that the API's requests are not tried against the admin's and OAuth's patterns.
    path("v1/", include(resource_urls)),
    # The landing page, the API references and the guides (before v2's catch-all: /v2/docs).
    path("", include("core.urls")),
    # Cal.com API v2: envelopes, names and versions over the same services (calv2/).
    path("v2/", include("calv2.urls")),
    # The REST hooks of Cal.com's Make app and of a private Zapier app (integrations/).
    path("api/integrations/", include("integrations.urls")),
    path("admin/", admin.site.urls),
    path("", include("accounts.oauth_urls")),
    path("", include(resource_urls)),
    # The demo OAuth client's redirect URI (seed_demo registers it; 404 when it does not exist).
    path("demo/callback", demo_views.demo_callback, name="demo-callback"),
    # Last: anything else under /v1/ is the API's JSON 404, even where DEBUG would show an HTML page.
    re_path(r"^v1/", core_views.api_not_found),
]

handler400 = "core.views.bad_request"
handler403 = "core.views.permission_denied"
handler404 = "core.views.not_found"
handler500 = "core.views.server_error"
