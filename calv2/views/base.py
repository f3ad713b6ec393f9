"""What every v2 operation shares: core's authentication, scopes and rate limit, JSON only,
the success envelope, v2's field names in errors raised by services, offset pagination."""

import math
from contextlib import contextmanager

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.negotiation import BaseContentNegotiation, DefaultContentNegotiation
from rest_framework.response import Response

from calv2.versions import (
    requested_version,
)
from core.query import Integer, QueryParameters
from core.viewsets import ResourceAPIView


class JSONOnly(BaseContentNegotiation):
    """v2 has one representation, JSON, and `?format=` is one of its query parameters (GET
    /v2/slots: `time` or `range`), not DRF's renderer override."""

    def select_parser(self, request, parsers):
        return DefaultContentNegotiation().select_parser(request, parsers)

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class V2View(ResourceAPIView):
    """core's authentication, per-method scopes and rate limit, plus v2's success envelope."""

    content_negotiation_class = JSONOnly
    schema = None  # described by the v2 document (calv2/openapi.py), not by v1's generated one

    @property
    def version(self) -> str:
        return requested_version(self.request)

    @staticmethod
    def success(data, *, status_code: int = status.HTTP_200_OK, **extra) -> Response:
        return Response({"status": "success", "data": data, **extra}, status=status_code)

    def body(self, input_class, **kwargs) -> dict:
        serializer = input_class(data=self.request.data, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


@contextmanager
def v2_field_names(renames: dict[str, str]):
    """A service names its fields as v1 does (`eventTriggers`); a v2 client sent them under v2's
    names (`triggers`), and the 400 says so."""
    try:
        yield
    except DjangoValidationError as error:
        if not hasattr(error, "error_dict"):
            raise
        raise DjangoValidationError(
            {renames.get(field, field): messages for field, messages in error.message_dict.items()}
        ) from None


# --- pagination -------------------------------------------------------------------------------


class SkipTake(QueryParameters):
    take = Integer(minimum=1, maximum=250, default=100, description="Page size (at most 250).")
    skip = Integer(minimum=0, maximum=10**9, default=0, description="Items to skip.")


def offset_pagination(*, total: int, take: int, skip: int, returned: int, exact: bool, more: bool) -> dict:
    """Cal.com's `pagination` object of offset lists, with `totalItemsIsExact` (the counting rule of
    core.pagination: `totalItems` is exact up to COUNT_EXACT_MAX rows, an estimate above). Whether
    a next page exists is known from the page (`more`), never from the total."""
    return {
        "totalItems": total,
        "totalItemsIsExact": exact,
        "remainingItems": max(total - skip - returned, 0),
        "returnedItems": returned,
        "itemsPerPage": take,
        "currentPage": skip // take + 1,
        "totalPages": math.ceil(total / take) if total else 0,
        "hasNextPage": more,
        "hasPreviousPage": skip > 0,
    }
