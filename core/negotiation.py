from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class JSONFallbackNegotiation(DefaultContentNegotiation):
    """Answer JSON whatever the client's Accept header says.

    The API has one representation. A client that asks for `application/problem+json`, `text/html`
    or anything else still gets the JSON (or problem+json) answer docs/api.md describes, rather
    than a 406, which is not one of the API's error codes. Endpoints with several renderers (the OpenAPI
    document's JSON and YAML) still negotiate normally.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            renderer = renderers[0]
            return renderer, renderer.media_type
