from core.scopes import READ_SCHEDULE, WRITE_SCHEDULE
from core.viewsets import (
    CrudResourceViewSet,
)
from scheduling.selectors.schedules import schedule_list
from scheduling.serializers.schedules import ScheduleCreateSerializer, ScheduleSerializer, ScheduleUpdateSerializer
from scheduling.services.schedules import schedule_create, schedule_delete, schedule_update


class ScheduleViewSet(CrudResourceViewSet):
    """Schedules with their availability rows and date overrides."""

    selector = schedule_list
    scopes = {"GET": READ_SCHEDULE, "POST": WRITE_SCHEDULE, "PATCH": WRITE_SCHEDULE, "DELETE": WRITE_SCHEDULE}
    envelope_singular = "schedule"
    envelope_plural = "schedules"
    serializer_class = ScheduleSerializer
    input_serializer_class = ScheduleCreateSerializer
    update_serializer_class = ScheduleUpdateSerializer

    def perform_create(self, data):
        return schedule_create(actor=self.request.user, **data)

    # schedule_create returns the schedule with its owner, its availability rows (ids from the
    # INSERT) and its event types (none yet) loaded: read back, it would show the same
    # (scheduling/tests/test_schedules_api.py compares the two answers).
    answers_as_written = True

    def perform_update(self, instance, data):
        return schedule_update(schedule=instance, **data)

    def perform_destroy(self, instance):
        schedule_delete(schedule=instance)
