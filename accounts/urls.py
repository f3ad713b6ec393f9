from django.urls import path

from accounts.resource_views import ApiKeyViewSet, InviteView, UserViewSet
from accounts.views import MembershipViewSet, MeView, TeamViewSet
from core.viewsets import ResourceRouter

router = ResourceRouter()
router.register("teams", TeamViewSet, basename="team")
router.register("memberships", MembershipViewSet, basename="membership")
router.register("users", UserViewSet, basename="user")
router.register("api-keys", ApiKeyViewSet, basename="api-key")

urlpatterns = [
    path("me", MeView.as_view(), name="me"),
    path("invites", InviteView.as_view(), name="invites"),
    *router.urls,
]
