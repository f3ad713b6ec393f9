"""/v2/teams, /v2/teams/{teamId} and /v2/teams/{teamId}/memberships in Cal.com v2's shapes, over
the same team and membership services as v1 (accounts.services), with v1's rules."""

from django.utils.text import slugify
from rest_framework import serializers, status

from accounts.models import MembershipRole
from accounts.selectors import membership_list, team_list
from accounts.services import (
    membership_create,
    membership_delete,
    membership_update,
    team_create,
    team_delete,
    team_update,
)
from calv2 import shapes
from calv2.inputs import V2Input
from calv2.views.base import SkipTake, V2View, offset_pagination, v2_field_names
from calv2.views.bookings import BookingFilters, booking_order, booking_selection
from calv2.views.profile import TeamsView
from core.exceptions import NotFound
from core.pagination import page_total
from core.scopes import READ_BOOKING, READ_MEMBERSHIP, WRITE_MEMBERSHIP


class TeamInput(V2Input):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=200, required=False)
    bio = serializers.CharField(max_length=10000, allow_blank=True, required=False)
    logo_url = serializers.URLField(max_length=2048, allow_blank=True, required=False)
    hide_branding = serializers.BooleanField(required=False)


class TeamUpdateInput(TeamInput):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


class MembershipInput(V2Input):
    user_id = serializers.IntegerField(min_value=1)
    accepted = serializers.BooleanField(required=False)
    role = serializers.ChoiceField(choices=MembershipRole.values, required=False)
    disable_impersonation = serializers.BooleanField(required=False)


class MembershipUpdateInput(V2Input):
    accepted = serializers.BooleanField(required=False)
    role = serializers.ChoiceField(choices=MembershipRole.values, required=False)
    disable_impersonation = serializers.BooleanField(required=False)


def _team_fields(data: dict) -> dict:
    """v2's names → the team service's (`logoUrl` is `logo`)."""
    return {("logo" if name == "logo_url" else name): value for name, value in data.items()}


def membership_2024(membership) -> dict:
    """Cal.com v2's team membership output."""
    user = membership.user
    return {
        "id": membership.pk,
        "userId": membership.user_id,
        "teamId": membership.team_id,
        "accepted": membership.accepted,
        "role": membership.role,
        "disableImpersonation": membership.disable_impersonation,
        "user": {"avatarUrl": user.avatar or None, "username": user.username, "name": user.name, "email": user.email},
    }


class TeamListView(TeamsView):
    """GET /v2/teams (the caller's teams) and POST /v2/teams (the caller becomes its OWNER)."""

    scopes = {"GET": READ_MEMBERSHIP, "POST": WRITE_MEMBERSHIP}

    def post(self, request):
        data = _team_fields(self.body(TeamInput))
        data.setdefault("slug", slugify(data["name"]))
        with v2_field_names({"logo": "logoUrl"}):
            team = team_create(owner=request.user, **data)
        return self.success(shapes.team(team), status_code=status.HTTP_201_CREATED)


def _visible_team(request, team_id: int):
    team = team_list(user=request.user).filter(pk=team_id).first()
    if team is None:
        raise NotFound(f"Team with id={team_id} not found.")
    return team


class TeamView(V2View):
    scopes = {"GET": READ_MEMBERSHIP, "PATCH": WRITE_MEMBERSHIP, "DELETE": WRITE_MEMBERSHIP}

    def get(self, request, team_id):
        return self.success(shapes.team(_visible_team(request, team_id)))

    def patch(self, request, team_id):
        team = _visible_team(request, team_id)
        with v2_field_names({"logo": "logoUrl"}):
            team = team_update(team=team, actor=request.user, **_team_fields(self.body(TeamUpdateInput)))
        return self.success(shapes.team(team))

    def delete(self, request, team_id):
        team = _visible_team(request, team_id)
        body = shapes.team(team)
        team_delete(team=team, actor=request.user)
        return self.success(body)


class TeamMembershipsView(V2View):
    scopes = {"GET": READ_MEMBERSHIP, "POST": WRITE_MEMBERSHIP}

    def get(self, request, team_id):
        _visible_team(request, team_id)
        memberships = membership_list(user=request.user, team_id=team_id)
        return self.success([membership_2024(membership) for membership in memberships])

    def post(self, request, team_id):
        _visible_team(request, team_id)
        membership = membership_create(actor=request.user, team_id=team_id, **self.body(MembershipInput))
        return self.success(membership_2024(membership), status_code=status.HTTP_201_CREATED)


class TeamMembershipView(V2View):
    scopes = {"GET": READ_MEMBERSHIP, "PATCH": WRITE_MEMBERSHIP, "DELETE": WRITE_MEMBERSHIP}

    def visible(self, team_id: int, membership_id: int):
        membership = membership_list(user=self.request.user, team_id=team_id).filter(pk=membership_id).first()
        if membership is None:
            raise NotFound(f"Membership with id={membership_id} not found.")
        return membership

    def get(self, request, team_id, membership_id):
        return self.success(membership_2024(self.visible(team_id, membership_id)))

    def patch(self, request, team_id, membership_id):
        membership = self.visible(team_id, membership_id)
        membership_update(membership=membership, actor=request.user, **self.body(MembershipUpdateInput))
        return self.success(membership_2024(self.visible(team_id, membership_id)))

    def delete(self, request, team_id, membership_id):
        membership = self.visible(team_id, membership_id)
        body = membership_2024(membership)
        membership_delete(membership=membership, actor=request.user)
        return self.success(body)


class TeamBookingsView(V2View):
    """GET /v2/teams/{teamId}/bookings: the bookings of the team's event types the caller may see
    (all of them for its admins and owners), with /v2/bookings' filters, in the 2024-08-13 shape."""

    scopes = {"GET": READ_BOOKING}

    def get(self, request, team_id):
        _visible_team(request, team_id)
        filters = {**BookingFilters.parse(request), "team_id": team_id, "teams_ids": []}
        page = SkipTake.parse(request)
        queryset = booking_selection(request, filters, statuses=filters["status"], order_by=booking_order(filters))
        bookings = list(queryset[page["skip"] : page["skip"] + page["take"] + 1])
        more, bookings = len(bookings) > page["take"], bookings[: page["take"]]
        total, exact = page_total(queryset, offset=page["skip"], rows=len(bookings), more=more)
        pagination = offset_pagination(
            total=total, take=page["take"], skip=page["skip"], returned=len(bookings), exact=exact, more=more
        )
        return self.success([shapes.booking_2024_08_13(booking) for booking in bookings], pagination=pagination)
