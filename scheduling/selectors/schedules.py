"""Reads of schedules: who may see which, and everything a response needs in a fixed number of queries."""

from django.db.models import Prefetch, QuerySet

from accounts.models import User
from scheduling.models import Availability, EventType, Schedule


def schedule_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[Schedule]:
    """The caller's schedules; a system admin sees everyone's (narrowed by `user_ids`). With what
    `ScheduleSerializer` shows, for the writes; GETs read it as rows (core.fastpath): one query for
    the schedules with their users, one for all their availability rows, one for their event
    types, whatever the page size."""
    queryset = Schedule.objects.select_related("user").prefetch_related(
        Prefetch("availability", queryset=Availability.objects.order_by("id")),
        Prefetch("event_types", queryset=EventType.objects.order_by("id")),
    )
    if not user.is_system_admin:
        queryset = queryset.filter(user=user)
    if user_ids is not None:
        queryset = queryset.filter(user_id__in=user_ids)
    return queryset.order_by("id")
