"""`AnyBranch` (core.fastpath.branches) answers what one OR of its branches answers: every page,
in every order, with any offset and filter, and each row once when it is in several branches."""

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from accounts.tests.factories import UserFactory
from core.fastpath.branches import AnyBranch
from scheduling.models import Booking, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows():
    """Bookings seen as organizer, as event type owner, as attendee, and through two of these."""
    caller, other = UserFactory(email="caller@example.org"), UserFactory()
    mine = EventTypeFactory(owner=caller)
    start = timezone.now() + timedelta(days=2)
    made = []
    for index in range(12):
        organizer = caller if index % 3 else other
        event_type = mine if index % 2 else None
        attendees = [{"email": "caller@example.org"}] if index % 5 == 0 else [{}]
        status = BookingStatus.CANCELLED if index % 4 == 0 else BookingStatus.ACCEPTED
        made.append(
            BookingFactory(
                organizer=organizer,
                event_type=event_type,
                attendees=attendees,
                status=status,
                start_time=start - timedelta(hours=index * (-1) ** index),
                end_time=start - timedelta(hours=index * (-1) ** index) + timedelta(minutes=30),
            )
        )
    BookingFactory(organizer=other)  # seen through no branch
    branches = [Q(organizer=caller), Q(event_type=mine), Q(attendees__email="caller@example.org")]
    return branches


ORDERS = [("id",), ("-id",), ("start_time", "id"), ("-created_at", "-id")]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("status", [None, BookingStatus.CANCELLED])
def test_every_slice_is_the_or_of_the_branches(rows, order, status):
    branches = rows
    plain = Booking.objects.filter(pk__in=Booking.objects.filter(branches[0] | branches[1] | branches[2]).values("pk"))
    branched = Booking.objects.filter(
        AnyBranch(branches[:2] + [Q(pk__in=Booking.objects.filter(branches[2]).values("pk"))])
    )
    if status is not None:
        plain, branched = plain.filter(status=status), branched.filter(status=status)
    plain, branched = plain.order_by(*order), branched.order_by(*order)
    expected = list(plain.values_list("pk", flat=True))
    assert len(expected) >= 3
    assert list(branched.values_list("pk", flat=True)) == expected
    for start in range(len(expected)):
        for size in (1, 2, 5):
            assert list(branched[start : start + size].values_list("pk", flat=True)) == expected[start : start + size]
    assert branched[:3].count() == len(expected[:3])
    assert branched.order_by()[:100].count() == len(expected)
    assert branched.count() == len(expected)


def test_it_must_be_anded_with_the_other_conditions(rows):
    queryset = Booking.objects.filter(Q(AnyBranch(rows[:2])) | Q(title="x"))
    with pytest.raises(ValueError, match="ANDed"):
        list(queryset[:2])
