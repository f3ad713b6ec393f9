"""The landing page, the OpenAPI documents and their reference pages (docs/api.md), and the guides;
the reference pages' assets come from drf-spectacular-sidecar, so they work offline."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from core import docs_pages

urlpatterns = [
    path("", docs_pages.home, name="home"),
    path("v1/openapi.json", SpectacularAPIView.as_view(), {"format": "json"}, name="openapi-json"),
    path("v1/openapi.yaml", SpectacularAPIView.as_view(), {"format": "yaml"}, name="openapi-yaml"),
    path("v1/docs", SpectacularSwaggerView.as_view(url_name="openapi-json"), name="api-docs"),
    path("v1/docs/", docs_pages.without_slash),
    # v2's document is calv2's (/v2/openapi.json); its reference page is here, beside v1's.
    path("v2/docs", docs_pages.v2_reference, name="v2-api-docs"),
    path("v2/docs/", docs_pages.without_slash),
    # The guides of docs/, which the API reference's description links to.
    path("docs/", docs_pages.guide_index, name="guide-index"),
    path("docs/<str:name>", docs_pages.guide_page, name="guide"),
]
