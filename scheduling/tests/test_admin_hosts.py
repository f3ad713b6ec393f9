"""Back office for a team event type's hosts (an inline on the event type page, with the API's
rules) and for a booking's attending hosts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from scheduling.models import BookingHost, EventType, Host
from scheduling.tests.factories import BookingFactory, EventTypeFactory, HostFactory, TeamEventTypeFactory
from scheduling.tests.test_admin import event_type_form, hosts_management_form

pytestmark = pytest.mark.django_db


def member(team, **fields):
    return MembershipFactory(team=team, **fields).user


def hosts_data(event_type_id, rows: list[dict]) -> dict:
    """The inline's fields for `rows` (`user`, `is_fixed`, `priority`, `weight`; `id` and `DELETE`
    for a row already stored, which come first)."""
    data = hosts_management_form(total=len(rows), initial=sum("id" in row for row in rows))
    for index, row in enumerate(rows):
        if event_type_id is not None:
            data[f"hosts-{index}-event_type"] = event_type_id
        for key, value in row.items():
            if value is not False:  # an unticked box is not sent
                data[f"hosts-{index}-{key}"] = "on" if value is True else value
    return data


def change(client, event_type, rows, **overrides):
    data = event_type_form(
        title=event_type.title,
        slug=event_type.slug,
        scheduling_type=event_type.scheduling_type,
        **hosts_data(event_type.pk, rows),
    )
    data.update(overrides)
    return client.post(reverse("admin:scheduling_eventtype_change", args=[event_type.pk]), data)


def stored(event_type) -> list[tuple]:
    return list(
        Host.objects.filter(event_type=event_type)
        .order_by("user_id")
        .values_list("user_id", "is_fixed", "priority", "weight", "membership__team_id")
    )


def test_the_event_type_page_lists_the_hosts_and_saves_changes_to_them(operator_client):
    team = TeamFactory()
    first, second = member(team), member(team)
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    host = HostFactory(event_type=event_type, user=first)

    page = operator_client.get(reverse("admin:scheduling_eventtype_change", args=[event_type.pk]))
    forms = page.context["inline_admin_formsets"][0].formset.forms
    assert [(form.instance.user, form["priority"].value()) for form in forms] == [(first, 2)]
    assert "Fixed (mandatory)" in page.content.decode()
    assert f'<option value="{first.pk}" selected>{first}</option>' in page.content.decode()

    response = change(
        operator_client,
        event_type,
        [
            {"id": host.pk, "user": first.pk, "is_fixed": True, "priority": 4, "weight": 50},
            {"user": second.pk, "is_fixed": False, "priority": 0, "weight": 100},
        ],
    )

    assert response.status_code == 302
    assert stored(event_type) == [(first.pk, True, 4, 50, team.pk), (second.pk, False, 0, 100, team.pk)]


def test_a_change_that_leaves_the_hosts_alone_keeps_their_rows(operator_client):
    team = TeamFactory()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="COLLECTIVE")
    host = HostFactory(event_type=event_type, user=member(team), weight=7)

    response = change(
        operator_client,
        event_type,
        [{"id": host.pk, "user": host.user_id, "is_fixed": False, "priority": 2, "weight": 7}],
        title="Renamed",
    )

    assert response.status_code == 302
    assert list(Host.objects.filter(event_type=event_type).values_list("pk", "weight")) == [(host.pk, 7)]
    assert EventType.objects.get(pk=event_type.pk).title == "Renamed"


@pytest.mark.parametrize("who", ["pending", "stranger", "other team"])
def test_a_host_who_is_not_an_accepted_member_is_refused_next_to_the_row(operator_client, who):
    team = TeamFactory()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    kept = HostFactory(event_type=event_type, user=member(team))
    user = {
        "pending": lambda: member(team, accepted=False),
        "stranger": UserFactory,
        "other team": lambda: member(TeamFactory()),
    }[who]()
    before = stored(event_type)

    response = change(
        operator_client,
        event_type,
        [
            {"id": kept.pk, "user": kept.user_id, "priority": 2, "weight": 100},
            {"user": user.pk, "priority": 2, "weight": 100},
        ],
    )

    assert response.status_code == 200
    row = response.context["inline_admin_formsets"][0].formset.forms[1]
    assert row.errors["user"] == [f"User {user.pk} is not an accepted member of team {team.pk}."]
    assert stored(event_type) == before


def test_a_host_listed_twice_is_refused(operator_client):
    team = TeamFactory()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    user = member(team)

    response = change(
        operator_client,
        event_type,
        [{"user": user.pk, "priority": 2, "weight": 100}, {"user": user.pk, "priority": 3, "weight": 100}],
    )

    assert response.status_code == 200
    assert not response.context["inline_admin_formsets"][0].formset.is_valid()
    assert stored(event_type) == []


@pytest.mark.parametrize("priority", ["5", "-1", "high"])
def test_a_priority_outside_lowest_to_highest_is_refused(operator_client, priority):
    team = TeamFactory()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")

    response = change(operator_client, event_type, [{"user": member(team).pk, "priority": priority, "weight": 100}])

    assert response.status_code == 200
    assert "priority" in response.context["inline_admin_formsets"][0].formset.forms[0].errors
    assert stored(event_type) == []


def test_hosts_without_a_scheduling_type_are_refused_with_the_apis_message(operator_client):
    team = TeamFactory()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    host = HostFactory(event_type=event_type, user=member(team))
    before = stored(event_type)

    response = operator_client.post(
        reverse("admin:scheduling_eventtype_change", args=[event_type.pk]),
        event_type_form(
            title=event_type.title,
            slug=event_type.slug,
            scheduling_type="",
            **hosts_data(event_type.pk, [{"id": host.pk, "user": host.user_id, "priority": 2, "weight": 100}]),
        ),
        follow=True,
    )

    assert "A team event type with hosts needs a scheduling type." in response.content.decode()
    assert EventType.objects.get(pk=event_type.pk).scheduling_type == "ROUND_ROBIN"
    assert stored(event_type) == before


def test_a_personal_event_type_has_no_hosts(operator_client):
    event_type = EventTypeFactory()

    response = change(operator_client, event_type, [{"user": UserFactory().pk, "priority": 2, "weight": 100}])

    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.non_form_errors() == [
        "Only a team event type has hosts."
    ]
    assert not Host.objects.exists()


def test_the_add_page_creates_a_collective_event_type_with_its_hosts(operator_client):
    team = TeamFactory()
    first, second = member(team), member(team)

    response = operator_client.post(
        reverse("admin:scheduling_eventtype_add"),
        event_type_form(
            team=team.pk,
            scheduling_type="COLLECTIVE",
            **hosts_data(
                None,
                [{"user": first.pk, "priority": 2, "weight": 100}, {"user": second.pk, "priority": 2, "weight": 1}],
            ),
        ),
    )

    assert response.status_code == 302
    event_type = team.event_types.get()
    assert event_type.scheduling_type == "COLLECTIVE"
    assert stored(event_type) == [(first.pk, False, 2, 100, team.pk), (second.pk, False, 2, 1, team.pk)]


def test_the_booking_page_shows_the_attending_hosts(operator_client):
    team_booking, personal = BookingFactory(), BookingFactory()
    attending = sorted((UserFactory() for _ in range(2)), key=lambda user: user.pk)
    BookingHost.objects.bulk_create([BookingHost(booking=team_booking, user=user) for user in reversed(attending)])

    shown = operator_client.get(reverse("admin:scheduling_booking_change", args=[team_booking.pk]))
    alone = operator_client.get(reverse("admin:scheduling_booking_change", args=[personal.pk]))

    expected = ", ".join(f"{user.username} (id {user.pk})" for user in attending)
    assert expected in shown.content.decode()
    assert "Attending hosts" in alone.content.decode()
    assert expected not in alone.content.decode()


def queries_of(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_event_type_list_and_page_read_as_much_with_ten_hosts_as_with_one(operator_client):
    team = TeamFactory()
    event_type = TeamEventTypeFactory(team=team, scheduling_type="ROUND_ROBIN")
    HostFactory(event_type=event_type, user=member(team))
    page = reverse("admin:scheduling_eventtype_change", args=[event_type.pk])
    listing = reverse("admin:scheduling_eventtype_changelist")
    queries_of(operator_client, page)  # warm caches (content types, sessions) so both runs are alike
    one = (queries_of(operator_client, page), queries_of(operator_client, listing))

    for _ in range(9):
        HostFactory(event_type=event_type, user=member(team))
    for _ in range(19):
        HostFactory(event_type=TeamEventTypeFactory(team=team), user=member(team))

    assert (queries_of(operator_client, page), queries_of(operator_client, listing)) == one
