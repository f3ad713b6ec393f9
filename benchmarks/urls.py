"""Benchmark-only URLs: the floors under /bench/, then every production URL unchanged.

Mounted by `config.settings_bench` only (its ROOT_URLCONF); `config.urls` never includes this.
"""

from django.urls import include, path
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import BaseAuthentication

from benchmarks import floors
from config.urls import handler404, handler500  # noqa: F401 - the same error handlers as production
from core.authentication import Credential
from core.scopes import all_scopes
from notifications.conf import overridden
from scheduling.views.bookings import BookingViewSet
from scheduling.views.schedules import ScheduleViewSet


class FixedUserAuthentication(BaseAuthentication):
    """No credential lookup: the bench user, loaded once per process. Only for measuring what
    authentication costs (`GET /bench/noauth/schedules/{id}` against `GET /v1/schedules/{id}`)."""

    user = None

    def authenticate(self, request):
        from accounts.models import User

        if FixedUserAuthentication.user is None:
            FixedUserAuthentication.user = User.objects.get(username="bench")
        return FixedUserAuthentication.user, Credential(kind="api_key", id=0, scopes=all_scopes())


class ScheduleWithoutAuthentication(ScheduleViewSet):
    authentication_classes = [FixedUserAuthentication]


class BookingsWithoutMail(BookingViewSet):
    """`POST /v1/bookings` with no e-mail written (`POST /bench/nomail/bookings`): what mail costs a
    booking, against the same request with it."""

    @extend_schema(exclude=True)  # the same operation as POST /v1/bookings, which the document describes
    def create(self, request, *args, **kwargs):
        with overridden(ENABLED=False):
            return super().create(request, *args, **kwargs)


bench_urls = [
    path("static", floors.static),
    path("db/me", floors.db_me),
    path("db/schedules", floors.db_schedules),
    path("db/schedules/<int:pk>", floors.db_schedule),
    path("db/bookings", floors.db_bookings),
    path("db/memberships", floors.db_memberships),
    path("db/payments", floors.db_payments),
    path("db/slots", floors.db_slots),
    path("db/schedules-create", floors.db_schedule_create),
    path("db/bookings-create", floors.db_booking_create),
    path("noauth/schedules/<str:pk>", ScheduleWithoutAuthentication.as_view({"get": "retrieve"})),
    path("nomail/bookings", BookingsWithoutMail.as_view({"post": "create"})),
]

urlpatterns = [
    path("bench/", include(bench_urls)),
    path("", include("config.urls")),
]
