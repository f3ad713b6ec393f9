"""`GET /v2/conferencing`: the caller's connected conferencing apps. This service connects none
(a booking's location is the link or place given), so the list is empty, as Cal.com's is for a
user who connected no app."""

from calv2.views.base import V2View
from core.scopes import READ_PROFILE


class ConferencingAppsView(V2View):
    scopes = {"GET": READ_PROFILE}

    def get(self, request):
        return self.success([])
