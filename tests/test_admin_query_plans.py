"""Every query of the back office's lists is served from an index at production sizes.

The database is seeded (by PostgreSQL itself, `benchmarks.admin_seed`) big enough for the planner to
prefer an index where one serves the query, and analysed. Then each changelist, each documented
search, each filter, the date hierarchy, a deep page, the change pages of a payment and a
membership, and the autocomplete behind the filters are requested as staff; every query they run is
`EXPLAIN`ed, and a sequential scan of payments, bookings, memberships, teams, users or OAuth tokens fails the test
with the query and its plan.
"""

import pytest
from django.urls import reverse
from oauth2_provider.models import AccessToken

from accounts.models import Membership, Team, User
from benchmarks.admin_seed import seed
from payments.models import Payment
from scheduling.models import Attendee, Booking
from tests.support.query_plans import outline, plan_of, prefer_ssd_costs, queries_of, sequential_scans

pytestmark = pytest.mark.django_db

# Enough rows that a scan costs the planner more than an index lookup; small enough to seed in
# seconds (a few million rows are for `make bench-admin`).
SIZES = {
    "users": 5_000,
    "teams": 5_000,
    "memberships": 20_000,
    "bookings": 10_000,
    "attendees": 10_000,
    "payments": 30_000,
    "webhooks": 300,
    "deliveries": 3_000,
    "api_keys": 300,
    "oauth_clients": 50,
    "access_tokens": 20_000,
    "refresh_tokens": 20_000,
}
LARGE_TABLES = {
    "payments_payment",
    "scheduling_booking",
    "accounts_membership",
    "accounts_team",
    "accounts_user",
    "oauth2_provider_accesstoken",
    "oauth2_provider_refreshtoken",
}


def admin_url(name: str, query: str = "", *args) -> str:
    return reverse(f"admin:{name}", args=args) + (f"?{query}" if query else "")


def autocomplete(app_label: str, model_name: str, field_name: str, term: str) -> str:
    query = f"app_label={app_label}&model_name={model_name}&field_name={field_name}&term={term}"
    return f"{reverse('admin:autocomplete')}?{query}"


def pages_to_check() -> list[str]:
    payment = Payment.objects.order_by("-id").select_related("booking__organizer").first()
    membership = Membership.objects.order_by("-id").select_related("user", "team").first()
    booking = Booking.objects.order_by("-id").first()
    attendee = Attendee.objects.order_by("-id").first()
    team = Team.objects.order_by("-id").first()
    user = User.objects.order_by("-id").first()
    token = AccessToken.objects.order_by("-id").select_related("application", "user").first()
    year, month, day = payment.created_at.year, payment.created_at.month, payment.created_at.day
    deep = "p=250"  # past the first 1,000 rows: ids first, then the page's rows
    payments, memberships, bookings = "payments_payment", "accounts_membership", "scheduling_booking"
    return [
        admin_url(f"{payments}_changelist"),
        admin_url(f"{payments}_changelist", f"q={payment.uid}"),
        admin_url(f"{payments}_changelist", f"q={payment.external_id[:7]}"),
        admin_url(f"{payments}_changelist", f"q={payment.booking.uid}"),
        admin_url(f"{payments}_changelist", f"q={payment.booking.organizer.email.upper()}"),
        admin_url(f"{payments}_changelist", "success__exact=0"),
        admin_url(f"{payments}_changelist", "refunded__exact=1"),
        admin_url(f"{payments}_changelist", "currency__exact=eur"),
        admin_url(f"{payments}_changelist", "payment_option__exact=HOLD"),
        admin_url(f"{payments}_changelist", f"booking__organizer__id__exact={payment.booking.organizer_id}"),
        admin_url(f"{payments}_changelist", f"created_at__year={year}"),
        admin_url(f"{payments}_changelist", f"created_at__year={year}&created_at__month={month}"),
        admin_url(f"{payments}_changelist", f"created_at__year={year}&created_at__month={month}&created_at__day={day}"),
        admin_url(f"{payments}_changelist", deep),
        admin_url(f"{payments}_change", "", payment.pk),
        admin_url(f"{memberships}_changelist"),
        admin_url(f"{memberships}_changelist", f"q={membership.user.email[:8]}"),
        admin_url(f"{memberships}_changelist", f"q={membership.team.name[5:15]}"),
        admin_url(f"{memberships}_changelist", f"team__id__exact={membership.team_id}"),
        admin_url(f"{memberships}_changelist", f"user__id__exact={membership.user_id}"),
        admin_url(f"{memberships}_changelist", "role__exact=OWNER&accepted__exact=1"),
        admin_url(f"{memberships}_changelist", deep.replace("250", "150")),
        admin_url(f"{memberships}_change", "", membership.pk),
        admin_url("accounts_team_changelist"),
        admin_url("accounts_team_changelist", f"q={team.name[5:15]}"),
        admin_url("accounts_team_changelist", f"q={team.slug}"),
        admin_url("accounts_team_changelist", "p=40"),
        admin_url("accounts_team_change", "", team.pk),
        admin_url("accounts_user_changelist"),
        admin_url("accounts_user_changelist", f"q={user.username}"),
        admin_url("accounts_user_changelist", f"q={user.name[-10:]}"),
        admin_url("accounts_user_changelist", "role__exact=ADMIN"),
        admin_url("accounts_user_changelist", "is_staff__exact=1"),
        admin_url("accounts_user_changelist", "is_superuser__exact=1"),
        admin_url("accounts_user_changelist", "is_active__exact=0"),
        admin_url("accounts_user_changelist", "verified__exact=1"),
        admin_url(f"{bookings}_changelist"),
        admin_url(f"{bookings}_changelist", f"q={booking.uid[:10]}"),
        admin_url(f"{bookings}_changelist", f"q={booking.organizer.email}"),
        admin_url(f"{bookings}_changelist", f"q={attendee.email}"),
        admin_url(f"{bookings}_changelist", f"q={booking.title[3:]}"),
        admin_url(f"{bookings}_changelist", "status__exact=cancelled"),
        admin_url(f"{bookings}_changelist", f"organizer__id__exact={booking.organizer_id}"),
        admin_url(f"{bookings}_changelist", f"start_time__year={booking.start_time.year}"),
        admin_url(f"{bookings}_changelist", "p=80"),
        admin_url("webhooks_webhook_changelist"),
        admin_url("webhooks_webhook_changelist", "q=hooks12"),
        admin_url("webhooks_webhookdelivery_changelist"),
        admin_url("webhooks_webhookdelivery_changelist", "status__exact=failed&trigger_event__exact=BOOKING_CREATED"),
        admin_url("webhooks_webhookdelivery_changelist", "q=msg_"),
        admin_url("accounts_apikey_changelist"),
        admin_url("accounts_apikey_changelist", "q=sk_1"),
        admin_url("oauth2_provider_application_changelist"),
        *(
            admin_url(f"oauth2_provider_{tokens}_changelist", query)
            for tokens in ("accesstoken", "refreshtoken")
            for query in (
                "",
                f"q={token.user.email.upper()}",
                f"q={token.user.username}",
                f"application__id__exact={token.application_id}",
                f"user__id__exact={token.user_id}",
                "p=150",
            )
        ),
        admin_url("oauth2_provider_accesstoken_change", "", token.pk),
        admin_url("oauth2_provider_grant_changelist", f"q={token.user.email}"),
        autocomplete("oauth2_provider", "accesstoken", "application", token.application.name),
        autocomplete("oauth2_provider", "refreshtoken", "user", token.user.email[:9]),
        autocomplete("accounts", "membership", "team", membership.team.name[5:12]),
        autocomplete("accounts", "membership", "user", user.email[:9]),
        autocomplete("scheduling", "booking", "organizer", user.email[:8]),
    ]


def test_no_list_search_filter_or_page_of_the_back_office_scans_a_large_table(operator_client):
    seed(SIZES)
    prefer_ssd_costs()
    scans = []
    checked = 0
    for url in pages_to_check():
        for sql, params in queries_of(operator_client, url):
            plan = plan_of(sql, params)
            checked += 1
            if tables := sequential_scans(plan, LARGE_TABLES):
                scans.append(f"{url}\n{'; '.join(tables)}\n{sql}\n{outline(plan)}")
    assert checked > 100
    assert not scans, "\n\n".join(scans)
