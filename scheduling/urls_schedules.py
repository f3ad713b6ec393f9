from core.viewsets import ResourceRouter
from scheduling.views.schedules import ScheduleViewSet

router = ResourceRouter()
router.register("schedules", ScheduleViewSet, basename="schedule")

urlpatterns = router.urls
