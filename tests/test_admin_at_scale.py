"""What staff see of the back office's production-size measures (core.admin_scale): which field is
searched how, "about N" past the exact-count limit, deep pages, autocomplete filters (and their bad
input), distinct values by skip scan, and the date hierarchy."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import Membership
from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from core import admin_scale
from payments.admin import PaymentAdmin
from payments.models import Payment
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import AttendeeFactory, BookingFactory

pytestmark = pytest.mark.django_db

PAYMENTS = reverse("admin:payments_payment_changelist")
MEMBERSHIPS = reverse("admin:accounts_membership_changelist")
BOOKINGS = reverse("admin:scheduling_booking_changelist")


def listed(client, url, **params) -> list:
    response = client.get(url, params)
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def test_the_search_box_says_which_field_is_searched_how(operator_client):
    response = operator_client.get(PAYMENTS)

    help_text = response.context["cl"].search_help_text
    assert help_text == (
        "Finds one value pasted whole or its beginning, in: payment uid (starts with); charge id (starts with); "
        "booking uid (starts with); organizer e-mail (starts with, any case)."
    )
    assert help_text in response.content.decode()
    team_help = operator_client.get(reverse("admin:accounts_team_changelist")).context["cl"].search_help_text
    assert "name (contains, any case)" in team_help


def test_payments_are_found_by_uid_charge_id_booking_uid_or_organizer_email_prefix(operator_client):
    organizer = UserFactory(email="Ada.Lovelace@Example.org")
    target = PaymentFactory(uid="pay_7f3a9c", external_id="ch_4242abcd", booking=BookingFactory(organizer=organizer))
    PaymentFactory(uid="pay_other", external_id="ch_9999")

    terms = ("pay_7f3a", "pay_7f3a9c", "ch_4242", target.booking.uid[:10], "ada.lovelace@", "ADA.LOVELACE@EXAMPLE.ORG")
    for term in terms:
        assert listed(operator_client, PAYMENTS, q=term) == [target], term
    # A prefix, not "contains": the middle of an id finds nothing; ids are case-sensitive.
    assert listed(operator_client, PAYMENTS, q="4242abcd") == []
    assert listed(operator_client, PAYMENTS, q="PAY_7F3A") == []
    assert listed(operator_client, PAYMENTS, q="   ") == list(Payment.objects.order_by("-id"))  # newest first


def test_memberships_are_found_by_part_of_a_team_name_and_bookings_by_attendee_email(operator_client):
    membership = MembershipFactory(team=TeamFactory(name="Orbital Mechanics Guild"), role="OWNER")
    MembershipFactory(team=TeamFactory(name="Customer Success"), role="OWNER")
    booking = BookingFactory()
    AttendeeFactory(booking=booking, email="grace.hopper@example.net")
    AttendeeFactory(booking=booking, email="grace.h@example.net")
    BookingFactory()

    assert listed(operator_client, MEMBERSHIPS, q="mechanics") == [membership]
    assert listed(operator_client, MEMBERSHIPS, q="me") == []  # under 3 characters: from the start only
    # Two attendees match; the booking is listed once.
    assert listed(operator_client, BOOKINGS, q="grace.h") == [booking]


def test_past_the_exact_count_limit_the_list_says_about_n(operator_client, monkeypatch):
    PaymentFactory.create_batch(4)
    monkeypatch.setattr(admin_scale.EstimatedCountPaginator, "exact_count_limit", 2)

    response = operator_client.get(PAYMENTS)

    paginator = response.context["cl"].paginator
    assert paginator.is_estimate
    assert "about " in response.content.decode()
    assert len(response.context["cl"].result_list) == 4


def test_an_exact_count_reads_no_more_rows_than_the_limit(operator_client):
    PaymentFactory.create_batch(3)

    with CaptureQueriesContext(connection) as queries:
        response = operator_client.get(PAYMENTS)

    assert not response.context["cl"].paginator.is_estimate
    assert "3 payments" in response.content.decode()
    counts = [query["sql"] for query in queries if "COUNT(" in query["sql"] and "payments_payment" in query["sql"]]
    assert len(counts) == 1 and f"LIMIT {admin_scale.EXACT_COUNT_LIMIT + 1}" in counts[0]


def test_a_deep_page_lists_the_same_rows_as_an_offset_would(operator_client, monkeypatch):
    monkeypatch.setattr(admin_scale, "DEFERRED_JOIN_FROM", 2)
    monkeypatch.setattr(PaymentAdmin, "list_per_page", 3)
    payments = PaymentFactory.create_batch(7)

    newest_first = sorted(payments, key=lambda payment: payment.pk, reverse=True)
    assert listed(operator_client, PAYMENTS, p=2) == newest_first[3:6]
    assert listed(operator_client, PAYMENTS, p=3) == newest_first[6:]


def test_the_team_filter_is_an_autocomplete_box_not_a_list_of_teams(operator_client):
    wanted = MembershipFactory(team=TeamFactory(name="Orbital Mechanics"), role="OWNER")
    MembershipFactory(team=TeamFactory(name="Customer Success"), role="OWNER")

    response = operator_client.get(MEMBERSHIPS, {"team__id__exact": wanted.team_id})

    assert list(response.context["cl"].result_list) == [wanted]
    page = response.content.decode()
    assert 'name="team__id__exact"' in page and "admin-autocomplete" in page
    assert "Customer Success" not in page  # only the chosen team is an option
    assert "core/admin/autocomplete_filter.js" in page
    autocomplete = operator_client.get(
        reverse("admin:autocomplete"),
        {"app_label": "accounts", "model_name": "membership", "field_name": "team", "term": "orbit"},
    )
    assert autocomplete.status_code == 200
    assert [result["text"] for result in autocomplete.json()["results"]] == ["Orbital Mechanics"]


@pytest.mark.parametrize(
    ("url", "parameter"),
    [
        (MEMBERSHIPS, "team__id__exact"),
        (MEMBERSHIPS, "user__id__exact"),
        (PAYMENTS, "booking__organizer__id__exact"),
    ],
)
def test_a_malformed_id_in_an_autocomplete_filter_is_the_admins_bad_lookup_page(operator_client, url, parameter):
    membership = MembershipFactory(role="OWNER")
    before = Membership.objects.count()

    response = operator_client.get(url, {parameter: "not-a-number"})

    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")
    assert Membership.objects.count() == before == 1
    assert Membership.objects.get().role == membership.role


def test_a_filter_across_two_relations_other_than_the_declared_ones_stays_refused(operator_client):
    assert operator_client.get(PAYMENTS, {"booking__organizer__email__exact": "x@example.org"}).status_code == 400


def test_the_currency_filter_offers_the_currencies_present(operator_client):
    PaymentFactory(currency="eur")
    PaymentFactory(currency="jpy")
    PaymentFactory(currency="eur")

    response = operator_client.get(PAYMENTS, {"currency__exact": "jpy"})

    currency_filter = next(spec for spec in response.context["cl"].filter_specs if spec.title == "currency")
    assert [value for value, _ in currency_filter.lookup_choices] == ["eur", "jpy"]
    assert [payment.currency for payment in response.context["cl"].result_list] == ["jpy"]


@pytest.mark.parametrize("read_dates_up_to", [1_000, 0], ids=["dates read once", "a probe per period"])
def test_the_date_hierarchy_links_only_periods_with_rows(operator_client, monkeypatch, read_dates_up_to):
    from core.templatetags import admin_scale as hierarchy

    monkeypatch.setattr(hierarchy, "READ_DATES_UP_TO", read_dates_up_to)
    now = timezone.now()
    old, new = PaymentFactory(), PaymentFactory()
    Payment.objects.filter(pk=old.pk).update(created_at=now.replace(year=now.year - 2))
    Payment.objects.filter(pk=new.pk).update(created_at=now)

    years = operator_client.get(PAYMENTS).content.decode()
    assert f"created_at__year={now.year - 2}" in years and f"created_at__year={now.year}" in years
    assert f"created_at__year={now.year - 1}" not in years

    months = operator_client.get(PAYMENTS, {"created_at__year": now.year}).content.decode()
    assert f"created_at__month={now.month}" in months
    other_month = (now.replace(day=1) - timedelta(days=1)).month
    if other_month != now.month and now.month != 1:
        assert f"created_at__month={other_month}&" not in months
    days = operator_client.get(PAYMENTS, {"created_at__year": now.year, "created_at__month": now.month})
    assert f"created_at__day={now.day}" in days.content.decode()
    assert listed(operator_client, PAYMENTS, created_at__year=now.year) == [new]
    searched = operator_client.get(PAYMENTS, {"q": new.uid}).content.decode()
    assert f"created_at__year={now.year}" in searched and f"created_at__year={now.year - 2}" not in searched


def test_a_teams_member_count_is_read_for_the_shown_teams_only(operator_client):
    team = TeamFactory()
    MembershipFactory.create_batch(3, team=team)
    TeamFactory()

    response = operator_client.get(reverse("admin:accounts_team_changelist"))

    counts = {shown.pk: shown.member_count for shown in response.context["cl"].result_list}
    assert counts[team.pk] == 3 and sorted(counts.values()) == [0, 3]


@pytest.mark.parametrize(("ordering", "direction"), [("-id", "DESC"), ("id", "ASC"), ("amount", "ASC")])
def test_a_count_reads_the_primary_key_in_the_lists_own_direction(ordering, direction):
    """A newest-first list's count walks the primary key from the newest row, as its page does (a
    filter on recent rows finds them at once); any other order counts from the oldest."""
    PaymentFactory.create_batch(3)
    with CaptureQueriesContext(connection) as captured:
        count = admin_scale.EstimatedCountPaginator(Payment.objects.filter(amount__gte=0).order_by(ordering), 100).count

    assert count == 3
    [sql] = [query["sql"] for query in captured.captured_queries]
    assert f'ORDER BY "payments_payment"."id" {direction} LIMIT 10001' in sql
