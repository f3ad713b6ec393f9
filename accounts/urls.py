from django.urls import path

from accounts.views import MembershipViewSet, MeView, TeamViewSet
from core.viewsets import ResourceRouter

router = ResourceRouter()
router.register("teams", TeamViewSet, basename="team")
router.register("memberships", MembershipViewSet, basename="membership")

urlpatterns = [path("me", MeView.as_view(), name="me"), *router.urls]
