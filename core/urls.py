"""The OpenAPI document and its docs page (docs/api.md); the page's assets come from
drf-spectacular-sidecar, so it works offline."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from core import docs_pages

urlpatterns = [
    path("v1/openapi.json", SpectacularAPIView.as_view(), {"format": "json"}, name="openapi-json"),
    path("v1/openapi.yaml", SpectacularAPIView.as_view(), {"format": "yaml"}, name="openapi-yaml"),
    path("v1/docs", SpectacularSwaggerView.as_view(url_name="openapi-json"), name="api-docs"),
    # The guides of docs/, which the API reference's description links to.
    path("docs/", docs_pages.guide_index, name="guide-index"),
    path("docs/<str:name>", docs_pages.guide_page, name="guide"),
]
