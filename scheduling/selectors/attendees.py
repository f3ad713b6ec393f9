from django.db.models import QuerySet

from accounts.models import User
from scheduling.models import Attendee


def attendee_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[Attendee]:
    """Cal.com v1's `/attendees`: the attendees of the caller's own bookings (as organizer); system
    admins see every attendee, or those of `user_ids`' bookings."""
    queryset = Attendee.objects.all()
    if user.is_system_admin:
        return queryset.filter(booking__organizer_id__in=user_ids) if user_ids else queryset
    return queryset.filter(booking__organizer=user)
