from django.db.models import QuerySet

from private_links.models import PrivateLink
from scheduling.models import EventType


def private_links_of(*, event_type: EventType) -> QuerySet[PrivateLink]:
    return PrivateLink.objects.filter(event_type=event_type).select_related("event_type").order_by("created_at", "id")
