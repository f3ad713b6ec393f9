"""Reads of schedules: who may see which, and everything a response needs in a fixed number of queries."""

from types import SimpleNamespace

from django.db.models import Prefetch, QuerySet
from django.db.models.query import BaseIterable

from accounts.models import User
from scheduling.models import Availability, EventType, Schedule


def schedule_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[Schedule]:
    """The caller's schedules; a system admin sees everyone's (narrowed by `user_ids`).

    One query for the schedules with their users, one for all their availability rows, one for
    their event types, whatever the page size. The rows land in plain lists (`availability_rows`,
    `event_type_rows`): a prefetch into the related managers builds a QuerySet per schedule, which
    cost more than the three queries together (docs/benchmarks.md, "Profiling and what changed").
    """
    queryset = Schedule.objects.select_related("user").prefetch_related(
        Prefetch("availability", queryset=Availability.objects.order_by("id"), to_attr="availability_rows"),
        Prefetch(
            "event_types",
            queryset=EventType.objects.only("id", "title", "slug", "length", "schedule_id").order_by("id"),
            to_attr="event_type_rows",
        ),
    )
    return _visible(queryset, user=user, user_ids=user_ids)


def _visible(queryset: QuerySet, *, user: User, user_ids: list[int] | None) -> QuerySet:
    if not user.is_system_admin:
        queryset = queryset.filter(user=user)
    if user_ids is not None:
        queryset = queryset.filter(user_id__in=user_ids)
    return queryset.order_by("id")


SCHEDULE_ROW_FIELDS = ("id", "user_id", "name", "time_zone")
USER_ROW_FIELDS = ("id", "username", "name", "email", "time_zone", "default_schedule_id")


class ScheduleRowIterable(BaseIterable):
    """Yields read-only rows shaped like what `schedule_list` gives the serializer (`user`,
    `availability_rows` with `days`, `event_type_rows`), from `.values()` queries: the same three
    queries, without building model instances (the largest cost of GET /v1/schedules?take=50).

    The queryset it iterates stays a plain `Schedule` queryset until it is evaluated, so that the
    pagination's COUNT is the bare `SELECT COUNT(*) FROM schedule WHERE …`, without the user join
    of the row query."""

    def __iter__(self):
        users: dict[int, SimpleNamespace] = {}
        schedules = []
        fields = (*SCHEDULE_ROW_FIELDS, *(f"user__{field}" for field in USER_ROW_FIELDS))
        for row in self.queryset.values(*fields):
            schedule = SimpleNamespace(**{field: row[field] for field in SCHEDULE_ROW_FIELDS})
            schedule.pk = schedule.id
            schedule.user = users.get(schedule.user_id)
            if schedule.user is None:
                schedule.user = users[schedule.user_id] = SimpleNamespace(
                    **{field: row[f"user__{field}"] for field in USER_ROW_FIELDS}
                )
            schedule.availability_rows, schedule.event_type_rows = [], []
            schedules.append(schedule)
        by_id = {schedule.id: schedule for schedule in schedules}
        if by_id:
            availability = Availability.objects.filter(schedule_id__in=by_id).order_by("id")
            for pk, schedule_id, days_mask, start_time, end_time, date in availability.values_list(
                "id", "schedule_id", "days_mask", "start_time", "end_time", "date"
            ):
                days = [day for day in range(7) if days_mask & (1 << day)]
                by_id[schedule_id].availability_rows.append(
                    SimpleNamespace(id=pk, days=days, start_time=start_time, end_time=end_time, date=date)
                )
            event_types = EventType.objects.filter(schedule_id__in=by_id).order_by("id")
            for pk, title, slug, length, schedule_id in event_types.values_list(
                "id", "title", "slug", "length", "schedule_id"
            ):
                by_id[schedule_id].event_type_rows.append(SimpleNamespace(id=pk, title=title, slug=slug, length=length))
        yield from schedules


def schedule_rows(*, user: User, user_ids: list[int] | None = None) -> QuerySet:
    """`schedule_list` for reading only (GET): same visibility, order and queries, but rows instead
    of model instances; pagination and lookups work on it as on any queryset."""
    queryset = _visible(Schedule.objects.all(), user=user, user_ids=user_ids)
    queryset._iterable_class = ScheduleRowIterable  # kept by clones, as .values() keeps its own
    return queryset
