"""/v2/schedules (2024-06-11 shapes) over the schedule services."""

from rest_framework import status
from rest_framework.response import Response

from calv2 import inputs, shapes
from calv2.views.base import V2View
from core.exceptions import NotFound
from core.scopes import (
    READ_SCHEDULE,
    WRITE_SCHEDULE,
)
from scheduling.selectors.schedules import schedule_list
from scheduling.services.schedules import schedule_create, schedule_delete, schedule_update


def _availability_rows(weekly, overrides) -> list[dict]:
    """v2's `availability` (days by name) and `overrides` (by date) as the schedule service's rows."""
    rows = [
        {
            "days": [inputs.WEEKDAY_NAMES.index(day) for day in item["days"]],
            "start_time": item["start_time"],
            "end_time": item["end_time"],
        }
        for item in weekly
    ]
    rows += [
        {"date": item["date"], "start_time": item["start_time"], "end_time": item["end_time"]} for item in overrides
    ]
    return rows


def _stored_rows(schedule) -> tuple[list[dict], list[dict]]:
    weekly, overrides = [], []
    for row in schedule.availability.all():
        if row.date is None:
            weekly.append(
                {
                    "days": [inputs.WEEKDAY_NAMES[day] for day in row.days],
                    "start_time": row.start_time,
                    "end_time": row.end_time,
                }
            )
        else:
            overrides.append({"date": row.date, "start_time": row.start_time, "end_time": row.end_time})
    return weekly, overrides


class ScheduleMixin:
    scopes = {"GET": READ_SCHEDULE, "POST": WRITE_SCHEDULE, "PATCH": WRITE_SCHEDULE, "DELETE": WRITE_SCHEDULE}

    def own_schedules(self):
        return schedule_list(user=self.request.user).filter(user=self.request.user)

    def shape(self, schedule) -> dict:
        self.request.user.refresh_from_db(fields=["default_schedule"])
        return shapes.schedule_2024_06_11(schedule, default_schedule_id=self.request.user.default_schedule_id)


class SchedulesView(ScheduleMixin, V2View):
    def get(self, request):
        default = request.user.default_schedule_id
        return self.success([shapes.schedule_2024_06_11(s, default_schedule_id=default) for s in self.own_schedules()])

    def post(self, request):
        data = self.body(inputs.ScheduleCreateInput)
        availability = None
        if "availability" in data or "overrides" in data:
            availability = _availability_rows(data.get("availability", []), data.get("overrides", []))
        schedule = schedule_create(
            actor=request.user,
            name=data["name"],
            time_zone=data["time_zone"],
            availability=availability,
            is_default=data["is_default"],
        )
        return self.success(self.shape(self.own_schedules().get(pk=schedule.pk)), status_code=status.HTTP_201_CREATED)


class DefaultScheduleView(ScheduleMixin, V2View):
    def get(self, request):
        schedule = self.own_schedules().filter(pk=request.user.default_schedule_id).first()
        return self.success(self.shape(schedule) if schedule is not None else None)


class ScheduleView(ScheduleMixin, V2View):
    def owned(self, schedule_id: int):
        schedule = self.own_schedules().filter(pk=schedule_id).first()
        if schedule is None:
            raise NotFound(f"Schedule with id={schedule_id} not found.")
        return schedule

    def get(self, request, schedule_id):
        return self.success(self.shape(self.owned(schedule_id)))

    def patch(self, request, schedule_id):
        schedule = self.owned(schedule_id)
        data = self.body(inputs.ScheduleUpdateInput)
        availability = None
        if "availability" in data or "overrides" in data:
            # Cal.com replaces what was sent: the weekly rules, the overrides, or both.
            weekly, overrides = _stored_rows(schedule)
            availability = _availability_rows(data.get("availability", weekly), data.get("overrides", overrides))
        schedule_update(
            schedule=schedule,
            name=data.get("name"),
            time_zone=data.get("time_zone"),
            availability=availability,
            is_default=data.get("is_default"),
        )
        return self.success(self.shape(self.owned(schedule_id)))

    def delete(self, request, schedule_id):
        schedule_delete(schedule=self.owned(schedule_id))
        return Response({"status": "success"})
