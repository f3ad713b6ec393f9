"""Domain errors and the one exception handler that turns every error into RFC 9457 problem+json.

Services raise these (or Django's ValidationError / PermissionDenied); views never build error
responses by hand.
"""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
REALM = 'Bearer realm="api"'


class ApplicationError(exceptions.APIException):
    """A domain rule was broken; `status_code` and `default_code` say which code of docs/api.md applies."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "validation_error"
    default_detail = "The request breaks a rule of this resource."

    def __init__(self, detail=None, code=None, errors=None):
        super().__init__(detail=detail, code=code)
        self.errors = errors


class Conflict(ApplicationError):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"
    default_detail = "The request conflicts with the current state of the resource."


class NotFound(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "not_found"
    default_detail = "Not found."


class Forbidden(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN
    default_code = "permission_denied"
    default_detail = "You do not have permission to do this."


class MalformedRequest(ApplicationError):
    default_code = "malformed_request"
    default_detail = "The request could not be read."


class PayloadTooLarge(ApplicationError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"
    default_detail = "The request body is too large."


class InvalidToken(exceptions.AuthenticationFailed):
    default_code = "invalid_token"
    default_detail = "The access token or API key is unknown, expired or revoked."


class InsufficientScope(exceptions.PermissionDenied):
    default_code = "insufficient_scope"

    def __init__(self, scope: str):
        self.scope = scope
        super().__init__(detail=f"This request needs the {scope} scope.", code="insufficient_scope")


class RateLimited(exceptions.Throttled):
    default_code = "rate_limited"


class ServiceUnavailable(exceptions.APIException):
    """A store the request needs (PostgreSQL) cannot be reached. Transient: the answer is a 503
    with `Retry-After`, and the next request tries again (no restart needed)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "service_unavailable"
    default_detail = "The service cannot reach its database right now; retry after the time in Retry-After."


# Errors that mean "the database is not there" (refused, dropped, restarted, timed out), as opposed
# to a bad query: the request may well succeed a few seconds later.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)


def database_unavailable_response(request) -> JsonResponse:
    """The 503 for plain Django views (the sign-in page, the admin) and Django's own 500 handler."""
    response = json_problem_response(request, 503, "service_unavailable", ServiceUnavailable.default_detail)
    response["Retry-After"] = str(settings.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response


TITLES = {
    "validation_error": "Validation error",
    "malformed_request": "Malformed request",
    "not_authenticated": "Not authenticated",
    "invalid_token": "Invalid token",
    "insufficient_scope": "Insufficient scope",
    "permission_denied": "Permission denied",
    "not_found": "Not found",
    "method_not_allowed": "Method not allowed",
    "not_acceptable": "Not acceptable",
    "conflict": "Conflict",
    "unsupported_media_type": "Unsupported media type",
    "rate_limited": "Too many requests",
    "server_error": "Server error",
    "payload_too_large": "Payload too large",
    "uri_too_long": "URI too long",
    "request_header_fields_too_large": "Request header fields too large",
    "service_unavailable": "Service unavailable",
    "idempotency_key_reused": "Idempotency key reused",
    "idempotency_key_in_use": "Idempotency key in use",
}


def problem_body(request, status_code: int, code: str, detail: str, errors=None) -> dict:
    body = {
        "status": status_code,
        "code": code,
        "title": TITLES.get(code, code.replace("_", " ").capitalize()),
        "detail": detail,
        "message": detail,
        "requestId": getattr(request, "request_id", None),
    }
    if errors:
        body["errors"] = errors
    return body


def flatten_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error dict → {"availability[2].startTime": ["…"]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "non_field_errors" if key in ("non_field_errors", "__all__") and not prefix else key
            if prefix and (isinstance(name, int) or str(name).isdigit()):
                path = f"{prefix}[{name}]"  # a list item (DRF keys list errors by index)
            else:
                path = f"{prefix}.{name}" if prefix else str(name)
            flat.update(flatten_errors(value, path))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            flat.setdefault(prefix or "non_field_errors", []).extend(str(item) for item in detail)
        else:
            for index, item in enumerate(detail):
                if item:
                    flat.update(flatten_errors(item, f"{prefix}[{index}]"))
    else:
        flat.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return flat


def _validation_message(errors: dict[str, list[str]]) -> str:
    parts = [f"{field}: {messages[0]}" for field, messages in errors.items() if messages]
    return "Invalid input. " + "; ".join(parts) if parts else "Invalid input."


def problem_exception_handler(exc, context):
    # Imported here: rest_framework.views imports the authentication classes, which import this module.
    from rest_framework.views import exception_handler as drf_exception_handler

    request = context.get("request")
    if isinstance(exc, RequestDataTooBig):
        # A body over DATA_UPLOAD_MAX_MEMORY_SIZE is not read at all (docs/api.md, "Limits").
        exc = PayloadTooLarge(
            detail=f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes "
            "(DATA_UPLOAD_MAX_MEMORY_SIZE)."
        )
    elif isinstance(exc, DATABASE_UNAVAILABLE):
        first_line = (str(exc).strip().splitlines() or [""])[0]
        logger.warning("database_unavailable: %s: %s", exc.__class__.__name__, first_line)
        exc = ServiceUnavailable()
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = exceptions.ValidationError(detail=detail)
    elif isinstance(exc, Http404):
        exc = NotFound(detail=str(exc) if str(exc) else None)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = Forbidden(detail=str(exc) or None)

    response = drf_exception_handler(exc, context)
    if response is None:
        logger.exception("Unhandled error", exc_info=exc)
        body = problem_body(request, 500, "server_error", "The server failed to handle this request.")
        return Response(body, status=500, content_type=PROBLEM_CONTENT_TYPE)

    errors = None
    if isinstance(exc, ApplicationError):
        code = exc.default_code if not isinstance(exc.detail, str) else exc.get_codes()
        code = code if isinstance(code, str) and code in TITLES else exc.default_code
        detail = str(exc.detail)
        errors = exc.errors
    elif isinstance(exc, exceptions.ValidationError):
        code = "validation_error"
        errors = flatten_errors(exc.detail)
        detail = _validation_message(errors)
    elif isinstance(exc, exceptions.ParseError):
        code, detail = "malformed_request", str(exc.detail)
    elif isinstance(exc, InvalidToken):
        code, detail = "invalid_token", str(exc.detail)
        response["WWW-Authenticate"] = f'{REALM}, error="invalid_token"'
    elif isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        code, detail = "not_authenticated", str(exc.detail)
        response["WWW-Authenticate"] = REALM
    elif isinstance(exc, InsufficientScope):
        code, detail = "insufficient_scope", str(exc.detail)
        response["WWW-Authenticate"] = f'{REALM}, error="insufficient_scope", scope="{exc.scope}"'
    elif isinstance(exc, exceptions.PermissionDenied):
        code, detail = "permission_denied", str(exc.detail)
    elif isinstance(exc, exceptions.NotFound):
        code, detail = "not_found", str(exc.detail)
    elif isinstance(exc, exceptions.MethodNotAllowed):
        code, detail = "method_not_allowed", str(exc.detail)
    elif isinstance(exc, exceptions.UnsupportedMediaType):
        code, detail = "unsupported_media_type", str(exc.detail)
    elif isinstance(exc, exceptions.NotAcceptable):
        code, detail = "not_acceptable", str(exc.detail)
    elif isinstance(exc, exceptions.Throttled):
        code, detail = "rate_limited", "Too many requests; retry after the time in Retry-After."
    elif isinstance(exc, ServiceUnavailable):
        code, detail = "service_unavailable", str(exc.detail)
        response["Retry-After"] = str(settings.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS)
    else:
        code, detail = exc.default_code if hasattr(exc, "default_code") else "server_error", str(exc)

    if getattr(exc, "retry_after", None) is not None:
        response["Retry-After"] = str(exc.retry_after)
    if response.status_code == 401 and "WWW-Authenticate" not in response:
        response["WWW-Authenticate"] = REALM
    response.data = problem_body(request, response.status_code, code, detail, errors)
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def json_problem_response(request, status_code: int, code: str, detail: str, errors=None) -> JsonResponse:
    """For plain Django views, middleware and URL-level 404/500 handlers outside DRF."""
    return JsonResponse(
        problem_body(request, status_code, code, detail, errors), status=status_code, content_type=PROBLEM_CONTENT_TYPE
    )
