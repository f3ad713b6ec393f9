"""GET/PATCH /v2/me, GET /v2/teams, GET /v2/timezones."""

from zoneinfo import available_timezones

from rest_framework.exceptions import ValidationError

from accounts.selectors import team_list
from accounts.services import user_update
from calv2 import inputs, shapes
from calv2.views.base import V2View, v2_field_names
from core.scopes import (
    READ_MEMBERSHIP,
    READ_PROFILE,
)
from scheduling.selectors.schedules import schedule_list


class MeView(V2View):
    """The caller's profile. PATCH needs only the profile scope, as Cal.com's `PROFILE_WRITE`
    does here: the caller edits themselves."""

    scopes = {"GET": READ_PROFILE, "PATCH": READ_PROFILE}

    def get(self, request):
        return self.success(shapes.me(request.user))

    def patch(self, request):
        data = dict(self.body(inputs.MeUpdateInput))
        if "avatar_url" in data:
            data["avatar"] = data.pop("avatar_url")
        if "default_schedule_id" in data:
            schedule_id = data.pop("default_schedule_id")
            schedule = schedule_list(user=request.user).filter(pk=schedule_id, user=request.user).first()
            if schedule is None:
                raise ValidationError({"defaultScheduleId": [f"Schedule {schedule_id} is not one of yours."]})
            data["default_schedule"] = schedule
        with v2_field_names({"avatar": "avatarUrl", "default_schedule": "defaultScheduleId"}):
            user = user_update(user=request.user, **data)
        return self.success(shapes.me(user))


class TeamsView(V2View):
    scopes = {"GET": READ_MEMBERSHIP}

    def get(self, request):
        return self.success([shapes.team(team) for team in team_list(user=request.user)])


class TimeZonesView(V2View):
    """Cal.com answers its city list (`{city, timezone, pop}`); this service has no city data and
    answers one entry per IANA zone, named after the zone's last part, with `pop` 0."""

    scopes = {"GET": READ_PROFILE}

    def get(self, request):
        return self.success(
            [
                {"city": name.rsplit("/", 1)[-1].replace("_", " "), "timezone": name, "pop": 0}
                for name in sorted(available_timezones())
                if "/" in name and not name.startswith(("Etc/", "SystemV/", "posix/", "right/"))
            ]
        )
