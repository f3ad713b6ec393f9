"""`/api/integrations/<app>/<call>`: the paths Cal.com's Make app and a private Zapier app call."""

from django.urls import path

from integrations import views
from integrations.bodies import MAKE, ZAPIER

CALLS = {
    "addSubscription": views.AddSubscriptionView,
    "deleteSubscription": views.DeleteSubscriptionView,
    "listBookings": views.ListBookingsView,
    "me": views.MeView,
}
ZAPIER_CALLS = {"listOOOEntries": views.ListOutOfOfficeEntriesView}

urlpatterns = [
    *(path(f"{MAKE}/{call}", view.as_view(app_id=MAKE), name=f"{MAKE}-{call}") for call, view in CALLS.items()),
    *(
        path(f"{ZAPIER}/{call}", view.as_view(app_id=ZAPIER), name=f"{ZAPIER}-{call}")
        for call, view in {**CALLS, **ZAPIER_CALLS}.items()
    ),
]
