"""Every resource's GET serializers can be read as rows (core.fastpath): a serializer field the row
reader cannot fetch fails here, by name, before any request does."""

from collections import defaultdict

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from accounts.tests.factories import UserFactory
from core.fastpath import row_iterable
from core.viewsets import ListResourceMixin, ResourceViewSet, RetrieveResourceMixin
from webhooks.tests.factories import WebhookFactory


def _viewsets(patterns=None):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from _viewsets(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            view_class = getattr(pattern.callback, "cls", None)
            if view_class and issubclass(view_class, ResourceViewSet):
                yield view_class


READ_VIEWSETS = sorted(
    {view for view in _viewsets() if issubclass(view, ListResourceMixin | RetrieveResourceMixin)},
    key=lambda view: f"{view.__module__}.{view.__qualname__}",
)


def test_every_readable_resource_is_found():
    names = {view.__name__ for view in READ_VIEWSETS}
    assert {"ScheduleViewSet", "BookingViewSet", "PaymentViewSet", "WebhookDeliveryViewSet"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("view_class", READ_VIEWSETS, ids=lambda view: view.__name__)
def test_the_list_and_detail_serializers_plan_as_rows(view_class):
    request = Request(APIRequestFactory().get("/"))
    request.user = UserFactory()
    # Path ids: any number will do (the queryset is built, not read), but a nested list looks up
    # its parent webhook first.
    kwargs = defaultdict(lambda: "1", webhook_id=str(WebhookFactory(user=request.user).id))
    for action in ("list", "retrieve"):
        view = view_class(action=action, request=request, kwargs=kwargs, format_kwarg=None)
        serializer_class = view.serializer_class if action == "list" else view.get_output_serializer_class()
        model = view.get_queryset().model  # the selector's model, as read_rows takes it
        plan = row_iterable(model, serializer_class)
        assert plan.node.model is model, f"{view_class.__name__}.{action}: {serializer_class.__name__}"
