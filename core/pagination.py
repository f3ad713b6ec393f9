"""Page-number pagination with the list envelope of docs/api.md, Conventions.

`?take=` (page size, default 100, max 500) and `?page=` (1-based, max 10000), as API_LIMITS sets
them. A bad value (core.query: ASCII digits, given once, in range) is a 400 `validation_error`
naming the parameter, never a silently clamped page. The list key is the view's
`envelope_plural`; `pagination` is `{page, take, total, hasNextPage, nextCursor}`, and a `Link`
header carries `rel="next"` / `rel="prev"`.

`total` follows one rule on every list (`counted`): it is exact up to COUNT_EXACT_MAX matched
rows (API_LIMITS, 10,000), and above that PostgreSQL's estimate with `totalIsExact: false`, so a
caller with a million rows pays for reading at most that many. Under a visibility rule of several
branches (the bookings one organises, attends, …) the estimate is of the first branch when it
alone holds more than the bound (core.fastpath.branches.count_up_to). `hasNextPage`, `nextCursor` and the
`Link` header come from the page itself (one row more than asked) and never need the total.

`?after=<nextCursor>` (core.keyset) is the other way to the next page: the rows after the last one
of the previous page, found through the list's order and its index rather than by skipping
`(page - 1) * take` rows, so a deep page costs what the first costs. With `after`, `page` is not
given and is null in the answer, and `Link` has only `rel="next"` (with `after`).
"""

import json

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from core import keyset
from core.fastpath.branches import count_up_to
from core.limits import limit
from core.query import query_int, single

PAGINATION_SCHEMA = {
    "type": "object",
    "required": ["page", "take", "total", "totalIsExact", "hasNextPage", "nextCursor"],
    "properties": {
        "page": {
            "type": "integer",
            "nullable": True,
            "description": "The page read; null for a page read with `after`.",
        },
        "take": {"type": "integer"},
        "total": {
            "type": "integer",
            "description": (
                "The rows the list's filters match: exact up to 10,000 (`totalIsExact`), above that PostgreSQL's "
                "estimate (at least 10,001, and at least the rows up to this page). Not needed to page: use "
                "`hasNextPage` and `nextCursor`."
            ),
        },
        "totalIsExact": {
            "type": "boolean",
            "description": "Whether `total` is exact; false when more than 10,000 rows match and it is an estimate.",
        },
        "hasNextPage": {"type": "boolean"},
        "nextCursor": {
            "type": "string",
            "nullable": True,
            "description": (
                "Pass as `after` for the next page (at the cost of the first, however deep); null on the last page "
                "and for an order that cannot be followed by cursor."
            ),
        },
    },
}


def page_total(queryset, *, offset: int, rows: int, more: bool) -> tuple[int, bool]:
    """The total of a page read at `offset` with one row more than asked (`rows` read, `more` if
    the extra one came): a list that ends on the page has it in hand; any other is `counted`."""
    if not more and (rows or offset == 0):
        return offset + rows, True
    return counted(queryset, seen=offset + rows if rows else 0)


def counted(queryset, *, seen: int = 0) -> tuple[int, bool]:
    """The rows `queryset` matches and whether that is exact: counted up to COUNT_EXACT_MAX (a
    COUNT over at most that many rows plus one), above it PostgreSQL's estimate of the whole
    query (EXPLAIN, no rows read). `seen` is how many rows the caller already knows there are (the
    pages up to and including this one): the estimate is never less."""
    bound = limit("COUNT_EXACT_MAX")
    # A visibility rule of branches counts its branches' ids (core.fastpath.branches.count_up_to).
    branches = count_up_to(queryset, bound + 1)
    total = branches.rows if branches is not None else queryset.order_by()[: bound + 1].count()
    if total <= bound:
        return max(total, seen), True
    if branches is not None and branches.estimate is not None:
        # Its first branch alone holds more than the bound: that branch's estimate.
        return max(branches.estimate(), bound + 1, seen), False
    # The estimate of the matched rows alone: the page's joins and columns change nothing in it.
    plan = json.loads(queryset.order_by().values("pk").explain(format="json"))
    estimate = int(plan[0]["Plan"]["Plan Rows"])
    return max(estimate, bound + 1, seen), False


class PagePagination(BasePagination):
    """At most two queries per page whatever its size: the page (one row more than asked) and a
    COUNT bounded by COUNT_EXACT_MAX (`counted`), which a list that ends on the page does not
    need."""

    page_query_param = "page"
    take_query_param = "take"

    # The parameters that take a cursor: a list may accept an older name beside `after`.
    after_query_params: tuple[str, ...] = ("after",)

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
        self.queryset = queryset
        self.columns = keyset.keyset_columns(queryset)
        after_parameter, cursor = self.read_cursor(request)
        if cursor is not None:
            values = keyset.decode(cursor, parameter=after_parameter, list_name=self.list_name(), columns=self.columns)
            self.page = None
            self.total, self.exact = counted(queryset)
            rows = list(keyset.after(queryset, self.columns, values)[: self.take + 1])
            self.more = len(rows) > self.take
            self.rows = rows[: self.take]
            return self.rows
        self.page = query_int(request, self.page_query_param, default=1, minimum=1, maximum=limit("PAGE_MAX"))
        offset = (self.page - 1) * self.take
        # One row more than the page: a list that ends on this page has its total in hand (every
        # row up to the page, and the page's own), so it needs no COUNT; a longer one, or a page
        # past the end, is counted.
        rows = list(queryset[offset : offset + self.take + 1])
        self.more = len(rows) > self.take
        self.rows = rows[: self.take]
        self.total, self.exact = page_total(queryset, offset=offset, rows=len(self.rows), more=self.more)
        return self.rows

    def read_cursor(self, request) -> tuple[str, str | None]:
        """The cursor parameter given (its name and value), refusing two of them or one with `page`."""
        given = [(name, single(request, name)) for name in self.after_query_params]
        given = [(name, value) for name, value in given if value is not None]
        if not given:
            return self.after_query_params[0], None
        if len(given) > 1:
            raise ValidationError({given[1][0]: [f"Give one of {', '.join(self.after_query_params)}."]})
        name, value = given[0]
        if self.page_query_param in request.query_params:
            raise ValidationError({name: [f"Give {name} or {self.page_query_param}, not both."]})
        return name, value

    def list_name(self) -> str:
        """What a cursor is bound to: the list (its envelope) it was given out by."""
        return getattr(self.view, "envelope_plural", "") or self.queryset.model._meta.label

    @property
    def has_next_page(self) -> bool:
        return self.more

    def next_cursor(self) -> str | None:
        if not self.more or not self.rows or self.columns is None:
            return None
        values = keyset.row_values(self.rows[-1], self.columns, self.queryset)
        return keyset.encode(self.list_name(), self.columns, values)

    def get_links(self, next_cursor: str | None) -> list[str]:
        url = self.request.build_absolute_uri()
        url = replace_query_param(url, self.take_query_param, self.take)
        links = []
        if self.page is None:
            if next_cursor is not None:
                links.append(f'<{replace_query_param(url, self.after_parameter(), next_cursor)}>; rel="next"')
            return links
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

    def after_parameter(self) -> str:
        """The cursor parameter of this request (as the client named it), for its next link."""
        return next((name for name in self.after_query_params if name in self.request.query_params), "after")

    def get_paginated_response(self, data):
        next_cursor = self.next_cursor()
        body = {
            self.view.envelope_plural: data,
            "pagination": {
                "page": self.page,
                "take": self.take,
                "total": self.total,
                "totalIsExact": self.exact,
                "hasNextPage": self.has_next_page,
                "nextCursor": next_cursor,
            },
        }
        headers = {}
        links = self.get_links(next_cursor)
        if links:
            headers["Link"] = ", ".join(links)
        return Response(body, headers=headers)

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": self.page_query_param,
                "in": "query",
                "required": False,
                "description": (
                    f"Page number, 1-based, at most {limit('PAGE_MAX')}. PostgreSQL reads and skips every row of "
                    "the pages before it, so a deep page costs in proportion to its depth (page 2,000 of 500 rows "
                    "reads a million); `after` costs the same at any depth."
                ),
                "schema": {"type": "integer", "minimum": 1, "maximum": limit("PAGE_MAX"), "default": 1},
            },
            *(
                {
                    "name": name,
                    "in": "query",
                    "required": False,
                    "description": (
                        "`pagination.nextCursor` of the previous page: the page after its last row, at the cost of "
                        "the first page however deep, and without shifting while rows are added. Not with `page`."
                        if name == self.after_query_params[0]
                        else f"The older name of `{self.after_query_params[0]}`; the same cursor."
                    ),
                    "schema": {"type": "string"},
                }
                for name in self.after_query_params
            ),
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
