"""A request's objects freed when its response has been sent (docs/benchmarks.md, "Garbage the
collector had to find"); the collector's settings for a server process are in
`core.fastpath.collector`."""

from rest_framework.serializers import BaseSerializer

from core.fastpath.switch import fast_paths


class ReleasedWhenSentMixin:
    """The objects of a request freed as soon as its response has been sent.

    DRF ties a view, its request, its response and the response's serializers into reference
    cycles (`view.request`, `request.parser_context["view"]`, `response.renderer_context`, a
    serializer's fields naming it as their `parent`, `ReturnList.serializer`). Reference counting
    cannot free a cycle, so a list's page of rows and its output stayed in memory until Python's
    cyclic collector found them, and that collector then walked them in whatever request was
    running: up to a tenth of a list's CPU, and pauses at the tail of the latencies
    (docs/benchmarks.md, "Garbage the collector had to find"). When the server closes the response
    (after its last byte), those links are cut and the request's objects go at once. The response
    keeps its `data` and `wsgi_request`, which tests read."""

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if not fast_paths():  # (`FAST_PATHS`) left to the collector, as DRF leaves them
            return response
        # Django calls a response's closers from `close()`, which the WSGI server (and the test
        # client) calls once the response is written; it is how Django closes a FileResponse's file.
        response._resource_closers.append(self._release_when_sent)
        return response

    def _release_when_sent(self):
        response, request = self.__dict__.get("response"), self.__dict__.get("request")
        self.__dict__.clear()
        if request is not None:
            request.parser_context = {}
            # Django's middleware links its request back to itself twice: `request.auser` (a
            # partial of the request) and the message storage (which holds the request). An API
            # answer uses neither once it is sent; without them the request goes by reference
            # counting too, and a worker's requests leave the collector nothing at all.
            for name in ("auser", "_messages"):
                request._request.__dict__.pop(name, None)
        if response is not None:
            response.renderer_context = {}
            data = getattr(response, "data", None)
            for value in (data, *data.values()) if isinstance(data, dict) else (data,):
                serializer = getattr(value, "serializer", None)  # DRF's ReturnList / ReturnDict
                if isinstance(serializer, BaseSerializer):
                    value.serializer = None
                    take_apart(serializer)


def take_apart(serializer: BaseSerializer) -> None:
    """Cut the links between a serializer no longer needed and its fields (each field's `parent`,
    the `child` of a list or a dict), nested ones included, so that reference counting frees them."""
    if not fast_paths():
        return
    parts = [serializer]
    while parts:
        part = parts.pop()
        fields = part.__dict__.get("fields")  # a serializer's, once built (a cached property)
        if fields is not None:
            parts.extend(fields.values())
        child = part.__dict__.get("child")
        if child is not None:
            parts.append(child)
        part.__dict__.clear()
