"""The one base for every resource endpoint (docs/api.md, Conventions; "For developers").

How to build a resource on it::

    class ScheduleViewSet(CrudResourceViewSet):  # or ResourceViewSet with the …ResourceMixin it needs
        scopes = {"GET": "READ_SCHEDULE", "POST": "WRITE_SCHEDULE",
                  "PATCH": "WRITE_SCHEDULE", "DELETE": "WRITE_SCHEDULE"}
        envelope_singular = "schedule"          # {"schedule": {...}}
        envelope_plural = "schedules"           # {"schedules": [...], "pagination": {...}}
        resource_label = "Schedule"             # "Schedule created successfully"
        serializer_class = ScheduleSerializer   # output (and input unless input_serializer_class)
        input_serializer_class = ScheduleCreateSerializer           # optional, POST
        update_serializer_class = ScheduleUpdateSerializer          # optional, PATCH

        selector = schedule_list                # the one selector: visibility lives there

        def perform_create(self, data):         # validated data (snake_case) → a service
            return schedule_create(user=self.request.user, **data)

        def perform_update(self, instance, data):
            return schedule_update(schedule=instance, actor=self.request.user, **data)

        def perform_destroy(self, instance):
            schedule_delete(schedule=instance)

    router = ResourceRouter()
    router.register("schedules", ScheduleViewSet, basename="schedule")
    urlpatterns = router.urls

What the base gives you:
- `Idempotency-Key` on every POST, PATCH and DELETE (core.idempotency): a retried write runs once;
- authentication (`CredentialAuthentication`) and `HasScope` with the view's `scopes` per method;
  the rate limit is counted before the scope check, so every authenticated response has the
  `RateLimit-*` headers;
- the envelopes of docs/api.md, Conventions: list with `pagination` + `Link`, get, create
  (200 + `Location` + `message`), PATCH (PUT is a 405), delete with its `message`;
- `take`/`page` validation, stable order by `id` (the base orders the queryset unless it is
  already ordered);
- the queryset: `selector(user=<the caller>)`, plus, for a list, its declared `list_filters` and
  `?userId=` (`list_arguments()`, which a list with filters of its own shape overrides; a nested
  resource overrides `selector_arguments()`); no viewset writes `get_queryset`;
- the mixins are named `…ResourceMixin`, not DRF's `…ModelMixin`: their hooks differ
  (`perform_create(data)` returns the instance, the envelopes are ours), so DRF's imported by habit
  cannot pass for them;
- one read path: list and get read the selector's queryset as rows of exactly what
  `serializer_class` shows (core.fastpath), writes get model instances from the same queryset;
- `requested_user_ids()`: the `?userId=` rule of docs/api.md, Conventions (system admins filter,
  others → 403 for another user's id, 400 for a non-integer);
- a 404 problem for an object outside the caller's visible queryset (never a 403 that leaks it);
  a 400 for a path id that is not a positive integer (Cal.com v1's answer).

Serializers should derive from `core.serializers.ApiModelSerializer` / `ApiSerializer` for
camelCase and strict bodies. Services raise `core.exceptions` errors or Django's
`ValidationError`; the exception handler turns them into problem+json.
"""

from collections.abc import Callable

from django.db.models import QuerySet
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView
from rest_framework.viewsets import GenericViewSet

from core.exceptions import Forbidden, NotFound
from core.fastpath import read_rows
from core.fastpath.loaded import read_back
from core.fastpath.release import ReleasedWhenSentMixin, take_apart
from core.fastpath.switch import fast_paths
from core.idempotency import IdempotentWritesMixin
from core.pagination import PagePagination
from core.query import QueryParameters, query_int_list

MAX_ID = 2**63 - 1  # bigint


def integer_lookup(value: str) -> int:
    """A path id that must be a positive integer; anything else is a 400 naming `id`."""
    if not value.isascii() or not value.isdigit() or not 0 < int(value) <= MAX_ID:
        raise ValidationError({"id": [f"Must be a positive integer, not {value[:40]!r}."]})
    return int(value)


class ResourceRouter(SimpleRouter):
    """Cal.com's paths have no trailing slash: `/schedules`, `/schedules/12`."""

    def __init__(self):
        super().__init__(trailing_slash="")


class RateLimitFirstMixin:
    """DRF checks permissions before throttles; the rate limit goes first so that a refused scope
    still counts against (and reports) the credential's budget. Done through DRF's public hooks:
    `check_permissions` runs the throttles before the permissions, and the throttle
    (core.ratelimit.CredentialRateThrottle) counts a request once however often it is asked, so
    DRF's own `check_throttles` after the permissions costs nothing."""

    def check_permissions(self, request):
        self.check_throttles(request)
        super().check_permissions(request)


class ResourceAPIView(ReleasedWhenSentMixin, IdempotentWritesMixin, RateLimitFirstMixin, APIView):
    """For endpoints that are not a collection (`/me`): same auth, scopes and rate limit."""

    scopes: dict[str, str] = {}


class ResourceViewSet(ReleasedWhenSentMixin, IdempotentWritesMixin, RateLimitFirstMixin, GenericViewSet):
    scopes: dict[str, str] = {}
    envelope_singular: str = ""
    envelope_plural: str = ""
    resource_label: str = ""
    pagination_class = PagePagination
    input_serializer_class = None
    update_serializer_class = None
    # Any path segment: an id that is not a number is a 400 naming it, as Cal.com v1 answered
    # (`/payments/invalid`), not a 404 (`integer_lookup`).
    lookup_value_regex = r"[^/]+"
    lookup_schema: dict = {"type": "integer"}  # the path id in the OpenAPI document
    conflict_actions: tuple[str, ...] = ()  # actions documented with a 409
    list_filters: type[QueryParameters] = QueryParameters  # the list's filters, read and documented (core.query)
    filters_by_user = True  # the list takes `?userId=` (requested_user_ids), and the document says so
    # The resource's one selector: `selector(**selector_arguments(), **list_arguments())` is the
    # caller's visible queryset, for reads and writes alike. Set as a plain function.
    selector: Callable[..., QuerySet] | None = None

    def get_queryset(self):
        """The selector's queryset for this caller: the view never filters visibility itself, and
        a list adds only what its request declares (`list_arguments`)."""
        arguments = self.selector_arguments()
        if self.action == "list":
            arguments.update(self.list_arguments())
        return type(self).selector(**arguments)

    def selector_arguments(self) -> dict:
        """What every call of the selector gets: the caller."""
        return {"user": self.request.user}

    def list_arguments(self) -> dict:
        """A list's extra selector arguments: its declared filters (`list_filters`, by their
        Python names) and, where the list takes it, `user_ids` from `?userId=`."""
        arguments = self.list_filters.parse(self.request)
        if self.filters_by_user:
            arguments["user_ids"] = self.requested_user_ids()
        return arguments

    # --- the caller --------------------------------------------------------------------------

    @property
    def is_system_admin(self) -> bool:
        return getattr(self.request.user, "is_system_admin", False)  # `accounts.models.User`'s rule

    def requested_user_ids(self) -> list[int] | None:
        """The `?userId=` filter (repeatable): only system admins may name someone else."""
        user_ids = query_int_list(self.request, "userId")
        if not user_ids:
            return None
        if not self.is_system_admin and any(user_id != self.request.user.pk for user_id in user_ids):
            raise Forbidden("Only system administrators may filter by another user's id.")
        return user_ids

    # --- plumbing ----------------------------------------------------------------------------

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        if not queryset.query.order_by:
            queryset = queryset.order_by("id")
        return queryset

    def get_object(self, *, as_rows: bool = False):
        """The object the path names, from the caller's visible queryset: a model instance for a
        write, a row of what the serializer shows for a GET (`as_rows`, core.fastpath)."""
        queryset = self.filter_queryset(self.get_queryset())
        if as_rows:
            queryset = read_rows(queryset, self.get_output_serializer_class())
        lookup = self.kwargs[self.lookup_url_kwarg or self.lookup_field]
        if self.lookup_schema.get("type") == "integer":
            integer_lookup(lookup)
        instance = self.lookup_object(queryset, lookup)
        if instance is None:
            raise NotFound(f"{self.get_resource_label()} {lookup} does not exist.")
        self.check_object_permissions(self.request, instance)
        return instance

    def lookup_object(self, queryset, lookup):
        """Find one object in the visible queryset, or None. Override for composite ids."""
        return queryset.filter(**{self.lookup_field: lookup}).first()

    def get_resource_label(self) -> str:
        if self.resource_label:
            return self.resource_label
        return self.envelope_singular[:1].upper() + self.envelope_singular[1:]

    def get_serializer_class(self):
        if self.action == "create" and self.input_serializer_class is not None:
            return self.input_serializer_class
        if self.action == "partial_update" and self.update_serializer_class is not None:
            return self.update_serializer_class
        return self.serializer_class

    def get_output_serializer_class(self):
        """What a single object's answer shows (the list's items use `serializer_class`)."""
        return self.serializer_class

    def get_output_serializer(self, instance):
        return self.get_output_serializer_class()(instance, context=self.get_serializer_context())

    def validated_input(self, *, partial: bool = False, instance=None) -> dict:
        serializer = self.get_serializer(instance, data=self.request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        take_apart(serializer)  # (ReleasedWhenSentMixin): its fields and it point at each other
        return data

    def reload(self, instance):
        """The written object for the response body, read back as GET /{id} reads it, by its primary
        key (`core.fastpath.loaded.read_back`): a write answers with what it wrote, also where the
        caller cannot see the result afterwards (a booking of someone else's event type). The
        instance itself where the row is gone."""
        serializer_class = self.get_output_serializer_class()
        return read_back(type(self), self.get_queryset, serializer_class, instance.pk) or instance

    def location_id(self, instance) -> str:
        return str(instance.pk)

    def location_url(self, instance) -> str:
        path = self.request.path.rstrip("/")
        return self.request.build_absolute_uri(f"{path}/{self.location_id(instance)}")

    # --- hooks a resource fills in ------------------------------------------------------------

    def perform_create(self, data):
        raise NotImplementedError

    def perform_update(self, instance, data):
        raise NotImplementedError

    def perform_destroy(self, instance):
        raise NotImplementedError


class ListResourceMixin:
    def list(self, request, *args, **kwargs):
        queryset = read_rows(self.filter_queryset(self.get_queryset()), self.serializer_class)
        page = self.paginate_queryset(queryset)
        serializer = self.serializer_class(page, many=True, context=self.get_serializer_context())
        return self.get_paginated_response(serializer.data)


class RetrieveResourceMixin:
    def retrieve(self, request, *args, **kwargs):
        instance = self.get_object(as_rows=True)
        return Response({self.envelope_singular: self.get_output_serializer(instance).data})


class CreateResourceMixin:
    # The service returns the new object with everything GET shows of it loaded, as written
    # (`core.fastpath.loaded.record_loaded`), and a test compares that answer with GET's.
    answers_as_written = False

    def create(self, request, *args, **kwargs):
        data = self.validated_input()
        instance = self.created_answer(self.perform_create(data))
        body = {
            self.envelope_singular: self.get_output_serializer(instance).data,
            "message": f"{self.get_resource_label()} created successfully",
        }
        # 200, not 201: Cal.com's v1 answered every success with 200, and integrations written for it
        # keep a created object only when the status is exactly 200.
        return Response(body, status=status.HTTP_200_OK, headers={"Location": self.location_url(instance)})

    def created_answer(self, instance):
        """The object a create's answer shows: read back as GET /{id} reads it (`reload`), or, for
        a view that `answers_as_written`, the service's object itself (the switch on: `FAST_PATHS`)."""
        if self.answers_as_written and fast_paths():
            return instance
        return self.reload(instance)


class UpdateResourceMixin:
    """PATCH only: every field is optional, and a PUT is a 405."""

    def partial_update(self, request, *args, **kwargs):
        instance = self.get_object()
        data = self.validated_input(partial=True, instance=instance)
        instance = self.reload(self.perform_update(instance, data))
        return Response({self.envelope_singular: self.get_output_serializer(instance).data})


class DestroyResourceMixin:
    def destroy(self, request, *args, **kwargs):
        instance = self.get_object()
        label = self.location_id(instance)
        self.perform_destroy(instance)
        return Response({"message": f"{self.get_resource_label()} with id: {label} deleted successfully"})


__all__ = [
    "RateLimitFirstMixin",
    "ResourceAPIView",
    "CreateResourceMixin",
    "DestroyResourceMixin",
    "ListResourceMixin",
    "ResourceRouter",
    "ResourceViewSet",
    "RetrieveResourceMixin",
    "UpdateResourceMixin",
]


class CrudResourceViewSet(
    ListResourceMixin,
    RetrieveResourceMixin,
    CreateResourceMixin,
    UpdateResourceMixin,
    DestroyResourceMixin,
    ResourceViewSet,
):
    """A resource with every standard action: list, get, create, PATCH and delete."""
