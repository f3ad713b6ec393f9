"""GET /v2/slots/why-not: the v2 envelope around the same answer as /v1/slots/why-not."""

from calv2.views.base import V2View
from core.scopes import READ_BOOKING
from scheduling.views.why_not import WhyNotQuery, explain


class WhyNotView(V2View):
    scopes = {"GET": READ_BOOKING}

    def get(self, request):
        return self.success(explain(request, WhyNotQuery.parse(request)))
