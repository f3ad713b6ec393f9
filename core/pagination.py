"""Page-number pagination with the list envelope of docs/api.md, Conventions.

`?take=` (page size, default 100, max 500) and `?page=` (1-based, max 10000), as API_LIMITS sets
them. A bad value (core.query: ASCII digits, given once, in range) is a 400 `validation_error`
naming the parameter, never a silently clamped page. The list key is the view's
`envelope_plural`; `pagination` is `{page, take, total, hasNextPage}`, and a `Link` header carries
`rel="next"` / `rel="prev"`.
"""

from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from core.limits import limit
from core.query import query_int

PAGINATION_SCHEMA = {
    "type": "object",
    "required": ["page", "take", "total", "hasNextPage"],
    "properties": {
        "page": {"type": "integer"},
        "take": {"type": "integer"},
        "total": {"type": "integer"},
        "hasNextPage": {"type": "boolean"},
    },
}


class PagePagination(BasePagination):
    """Two queries per page whatever its size: one COUNT and one slice."""

    page_query_param = "page"
    take_query_param = "take"

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.view = view
        self.take = query_int(
            request,
            self.take_query_param,
            default=limit("PAGE_SIZE_DEFAULT"),
            minimum=1,
            maximum=limit("PAGE_SIZE_MAX"),
        )
        self.page = query_int(request, self.page_query_param, default=1, minimum=1, maximum=limit("PAGE_MAX"))
        self.total = queryset.count()
        offset = (self.page - 1) * self.take
        return list(queryset[offset : offset + self.take]) if offset < self.total else []

    @property
    def has_next_page(self) -> bool:
        return self.page * self.take < self.total

    def get_links(self) -> list[str]:
        url = self.request.build_absolute_uri()
        url = replace_query_param(url, self.take_query_param, self.take)
        links = []
        if self.has_next_page:
            links.append(f'<{replace_query_param(url, self.page_query_param, self.page + 1)}>; rel="next"')
        if self.page > 1:
            # The previous page of a page past the end is the last real page.
            last_page = max(1, -(-self.total // self.take))
            previous = min(self.page - 1, last_page)
            previous_url = (
                remove_query_param(url, self.page_query_param)
                if previous == 1
                else replace_query_param(url, self.page_query_param, previous)
            )
            links.append(f'<{previous_url}>; rel="prev"')
        return links

    def get_paginated_response(self, data):
        body = {
            self.view.envelope_plural: data,
            "pagination": {
                "page": self.page,
                "take": self.take,
                "total": self.total,
                "hasNextPage": self.has_next_page,
            },
        }
        headers = {}
        links = self.get_links()
        if links:
            headers["Link"] = ", ".join(links)
        return Response(body, headers=headers)

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": self.page_query_param,
                "in": "query",
                "required": False,
                "description": f"Page number, 1-based, at most {limit('PAGE_MAX')}.",
                "schema": {"type": "integer", "minimum": 1, "maximum": limit("PAGE_MAX"), "default": 1},
            },
            {
                "name": self.take_query_param,
                "in": "query",
                "required": False,
                "description": f"Page size (default {limit('PAGE_SIZE_DEFAULT')}, at most {limit('PAGE_SIZE_MAX')}).",
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": limit("PAGE_SIZE_MAX"),
                    "default": limit("PAGE_SIZE_DEFAULT"),
                },
            },
        ]

    def get_paginated_response_schema(self, schema):
        # The envelope key is filled in by core.openapi.ResourceAutoSchema, which knows the view.
        plural = getattr(self, "envelope_plural", "results")
        return {
            "type": "object",
            "required": [plural, "pagination"],
            "properties": {
                plural: schema,
                "pagination": PAGINATION_SCHEMA,
            },
        }
