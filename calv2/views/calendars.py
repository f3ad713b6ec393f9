"""Cal.com v2's connected-calendar operations over the calendars app's services: /v2/calendars…,
/v2/selected-calendars, /v2/destination-calendars and GET /v2/bookings/{uid}/references.

Cal.com's path names a calendar app: `apple` (Apple iCloud's CalDAV with an app password) and, as
this service's extension, `caldav` (any CalDAV server: `url`, `username`, `password`) and
`ics-feed`; `google` and `office365` connect through OAuth (calv2.views.calendar_oauth) and are
checked and disconnected here like the others."""

from django.urls import path
from rest_framework import serializers, status

from calendars.models import APP_SLUGS, APP_TITLES, INTEGRATION_TYPES, ConnectionKind
from calendars.selectors import (
    busy_times_of,
    calendar_by_external_id,
    destination_of,
    is_healthy,
    visible_connections,
    visible_references,
)
from calendars.services import (
    calendar_select,
    connect_caldav,
    connect_ics_feed,
    connection_disconnect,
    connections_refresh_now,
    destination_set,
)
from calv2.inputs import V2Input
from calv2.views.base import V2View
from core.exceptions import ApplicationError, NotFound
from core.query import Choice, Instant, Integer, QueryParameters, Text, TimeZone
from core.scopes import READ_BOOKING, READ_CALENDAR, WRITE_CALENDAR

# The path's {calendar} and the kind of connection it names.
PATH_KINDS = {
    "apple": ConnectionKind.APPLE,
    "caldav": ConnectionKind.CALDAV,
    "ics-feed": ConnectionKind.ICS,
    "google": ConnectionKind.GOOGLE,
    "office365": ConnectionKind.OFFICE365,
}
CREDENTIAL_CALENDARS = ("apple", "caldav")
TITLES, SLUGS = APP_TITLES, APP_SLUGS


def _kind_of_path(calendar: str, allowed) -> str:
    if calendar not in allowed:
        raise ApplicationError(f"Invalid calendar type, available calendars are: {', '.join(allowed)}")
    return PATH_KINDS[calendar]


# --- shapes ---------------------------------------------------------------------------------------


def _calendar(calendar, connection, primary: bool, email: str) -> dict:
    return {
        "externalId": calendar.external_id,
        "name": calendar.name,
        "readOnly": calendar.read_only,
        "isSelected": calendar.is_selected,
        "credentialId": connection.pk,
        "integration": connection.integration,
        "primary": primary,
        "email": email,
        "timeZone": calendar.time_zone,
    }


def _connected(connection, email: str) -> dict:
    calendars = list(connection.calendars.all())
    shown = [_calendar(calendar, connection, index == 0, email) for index, calendar in enumerate(calendars)]
    return {
        "integration": {
            "type": connection.integration,
            "slug": SLUGS[connection.kind],
            "title": TITLES[connection.kind],
            "name": TITLES[connection.kind],
            "categories": ["calendar"],
            "installed": True,
        },
        "credentialId": connection.pk,
        "primary": shown[0] if shown else None,
        "calendars": shown,
        # This service's extension: whether the busy time is current, and why not.
        "health": {
            "healthy": is_healthy(connection),
            "lastSuccessAt": connection.last_success_at.isoformat() if connection.last_success_at else None,
            "error": connection.last_error or None,
        },
    }


def _destination(destination, user) -> dict | None:
    if destination is None:
        return None
    calendar, connection = destination.calendar, destination.calendar.connection
    return {
        "id": destination.pk,
        "integration": connection.integration,
        "externalId": calendar.external_id,
        "primaryEmail": user.email,
        "userId": user.pk,
        "eventTypeId": None,
        "credentialId": connection.pk,
        "name": calendar.name,
        "primary": True,
        "readOnly": calendar.read_only,
        "email": user.email,
        "integrationTitle": TITLES[connection.kind],
    }


def credential_fields(connection, user_id: int) -> dict:
    return {
        "id": connection.pk,
        "type": connection.integration,
        "userId": user_id,
        "teamId": None,
        "appId": SLUGS[connection.kind],
        "invalid": connection.invalid,
    }


def _selection(calendar, user) -> dict:
    return {
        "userId": user.pk,
        "integration": calendar.connection.integration,
        "externalId": calendar.external_id,
        "credentialId": calendar.connection_id,
    }


# --- inputs ---------------------------------------------------------------------------------------


class IcsFeedInput(V2Input):
    urls = serializers.ListField(child=serializers.URLField(max_length=2000), min_length=1, max_length=10)
    read_only = serializers.BooleanField(required=False, default=True)


class CredentialsInput(V2Input):
    username = serializers.CharField(max_length=300)
    password = serializers.CharField(max_length=300, trim_whitespace=False)
    url = serializers.URLField(max_length=2000, required=False)


class DisconnectInput(V2Input):
    id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class SelectedCalendarInput(V2Input):
    integration = serializers.ChoiceField(choices=sorted(set(INTEGRATION_TYPES.values())))
    external_id = serializers.CharField(max_length=1000)
    credential_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class DestinationInput(V2Input):
    integration = serializers.ChoiceField(choices=sorted(set(INTEGRATION_TYPES.values())))
    external_id = serializers.CharField(max_length=1000)


class SelectedCalendarQuery(QueryParameters):
    integration = Choice(sorted(set(INTEGRATION_TYPES.values())), required=True)
    external_id = Text(required=True)
    credential_id = Integer(minimum=1, maximum=2**31 - 1, required=True)


class BusyTimesZone(QueryParameters):
    time_zone = TimeZone(description="The zone of dateFrom and dateTo when they are dates.")
    logged_in_users_tz = TimeZone(description="Deprecated name of timeZone.")


DATE_FROM = Instant(required=True, zone_from="zone")
DATE_TO = Instant(required=True, end=True, zone_from="zone")


# --- views ----------------------------------------------------------------------------------------


class CalendarsView(V2View):
    scopes = {"GET": READ_CALENDAR}

    def get(self, request):
        user = request.user
        return self.success(
            {
                "connectedCalendars": [_connected(connection, user.email) for connection in visible_connections(user)],
                "destinationCalendar": _destination(destination_of(user), user),
            }
        )


def _calendars_to_load(request) -> list[tuple[int, str]] | None:
    """Cal.com's `calendarsToLoad[0][credentialId]=…&calendarsToLoad[0][externalId]=…`."""
    found: dict[str, dict[str, str]] = {}
    for name, value in request.query_params.items():
        if name.startswith("calendarsToLoad[") and name.endswith("]"):
            index, _, field = name[len("calendarsToLoad[") : -1].partition("][")
            found.setdefault(index, {})[field] = value
    if not found:
        return None
    pairs = []
    for index, fields in sorted(found.items()):
        credential, external = fields.get("credentialId", ""), fields.get("externalId")
        if not credential.isdigit() or not external:
            raise ApplicationError(
                f"calendarsToLoad[{index}] needs credentialId (an integer) and externalId.",
                errors={f"calendarsToLoad[{index}]": ["credentialId and externalId are required."]},
            )
        pairs.append((int(credential), external))
    return pairs


class BusyTimesView(V2View):
    """The busy time this service knows (its cache of the calendars, never a live call)."""

    scopes = {"GET": READ_CALENDAR}

    def get(self, request):
        zones = BusyTimesZone.parse(request)
        zone = zones["time_zone"] or zones["logged_in_users_tz"]
        if not zone:
            raise ApplicationError("Either timeZone or loggedInUsersTz must be provided")
        date_from = DATE_FROM.read(request, "dateFrom", {"zone": zone})
        date_to = DATE_TO.read(request, "dateTo", {"zone": zone})
        calendar_ids = None
        pairs = _calendars_to_load(request)
        if pairs is not None:
            calendar_ids = []
            for credential_id, external_id in pairs:
                calendars = [
                    calendar
                    for integration in set(INTEGRATION_TYPES.values())
                    if (
                        calendar := calendar_by_external_id(
                            request.user, integration=integration, external_id=external_id, credential_id=credential_id
                        )
                    )
                ]
                calendar_ids.extend(calendar.pk for calendar in calendars)
        rows = busy_times_of(request.user, date_from, date_to, calendar_ids)
        return self.success(
            [
                {
                    "start": row.start.isoformat(),
                    "end": row.end.isoformat(),
                    "source": row.calendar.connection.integration,
                }
                for row in rows
            ]
        )


class IcsFeedSaveView(V2View):
    scopes = {"POST": WRITE_CALENDAR}

    def post(self, request):
        data = self.body(IcsFeedInput)
        connections = [
            connect_ics_feed(user=request.user, url=url, read_only=data["read_only"]) for url in data["urls"]
        ]
        return self.success(credential_fields(connections[0], request.user.pk), status_code=status.HTTP_201_CREATED)


def _check(user, kind: str) -> None:
    """Read the connections of this kind now (a short deadline each), then answer from the result."""
    connections_refresh_now(user=user, kind=kind)
    connections = [connection for connection in visible_connections(user) if connection.kind == kind]
    if not connections:
        raise ApplicationError(f"Credentials for {TITLES[kind]} calendar not found.")
    for connection in connections:
        if connection.invalid or not is_healthy(connection):
            raise ApplicationError(connection.last_error or f"{TITLES[kind]} calendar is not read yet.")


class IcsFeedCheckView(V2View):
    scopes = {"GET": READ_CALENDAR}

    def get(self, request):
        _check(request.user, ConnectionKind.ICS)
        return self.success(None)


class CalendarCredentialsView(V2View):
    scopes = {"POST": WRITE_CALENDAR}

    def post(self, request, calendar):
        kind = _kind_of_path(calendar, CREDENTIAL_CALENDARS)
        data = self.body(CredentialsInput)
        if kind == ConnectionKind.CALDAV and not data.get("url"):
            raise ApplicationError("url is required for a CalDAV server.", errors={"url": ["Required."]})
        connect_caldav(
            user=request.user, kind=kind, url=data.get("url", ""), username=data["username"], password=data["password"]
        )
        return self.success(None, status_code=status.HTTP_201_CREATED)


class CalendarCheckView(V2View):
    scopes = {"GET": READ_CALENDAR}

    def get(self, request, calendar):
        _check(request.user, _kind_of_path(calendar, tuple(PATH_KINDS)))
        return self.success(None)


class CalendarDisconnectView(V2View):
    scopes = {"POST": WRITE_CALENDAR}

    def post(self, request, calendar):
        _kind_of_path(calendar, tuple(PATH_KINDS))
        data = self.body(DisconnectInput)
        connection = visible_connections(request.user).filter(pk=data["id"]).first()
        if connection is None:
            raise NotFound(f"Credential with id={data['id']} not found.")
        answer = credential_fields(connection, request.user.pk)
        connection_disconnect(connection=connection)
        return self.success(answer)


def _own_calendar(user, *, integration: str, external_id: str, credential_id: int | None = None):
    calendar = calendar_by_external_id(
        user, integration=integration, external_id=external_id, credential_id=credential_id
    )
    if calendar is None:
        raise NotFound(f"Calendar {external_id} of {integration} not found.")
    return calendar


class SelectedCalendarsView(V2View):
    scopes = {"POST": WRITE_CALENDAR, "DELETE": WRITE_CALENDAR}

    def post(self, request):
        data = self.body(SelectedCalendarInput)
        calendar = _own_calendar(request.user, **data)
        calendar_select(calendar=calendar, selected=True)
        return self.success(_selection(calendar, request.user), status_code=status.HTTP_201_CREATED)

    def delete(self, request):
        query = SelectedCalendarQuery.parse(request)
        calendar = _own_calendar(request.user, **query)
        calendar_select(calendar=calendar, selected=False)
        return self.success(_selection(calendar, request.user))


class DestinationCalendarsView(V2View):
    scopes = {"PUT": WRITE_CALENDAR}

    def put(self, request):
        data = self.body(DestinationInput)
        calendar = _own_calendar(request.user, **data)
        destination_set(user=request.user, calendar=calendar)
        return self.success(_selection(calendar, request.user))


class BookingReferencesView(V2View):
    scopes = {"GET": READ_BOOKING}

    def get(self, request, uid):
        from calv2 import selectors

        booking = selectors.booking_v2_by_uid(user=request.user, uid=uid)
        if booking is None:
            raise NotFound(f"Booking with uid={uid} not found.")
        references = visible_references(request.user).filter(booking_id=booking.pk).order_by("id")
        return self.success(
            [
                {
                    "id": reference.pk,
                    "type": reference.type,
                    "eventUid": reference.uid,
                    "destinationCalendarId": reference.external_calendar_id or None,
                }
                for reference in references
            ]
        )


urlpatterns = [
    path("calendars", CalendarsView.as_view(), name="v2-calendars"),
    path("calendars/busy-times", BusyTimesView.as_view(), name="v2-calendars-busy-times"),
    path("calendars/ics-feed/save", IcsFeedSaveView.as_view(), name="v2-calendars-ics-feed-save"),
    path("calendars/ics-feed/check", IcsFeedCheckView.as_view(), name="v2-calendars-ics-feed-check"),
    path("calendars/<str:calendar>/credentials", CalendarCredentialsView.as_view(), name="v2-calendar-credentials"),
    path("calendars/<str:calendar>/check", CalendarCheckView.as_view(), name="v2-calendar-check"),
    path("calendars/<str:calendar>/disconnect", CalendarDisconnectView.as_view(), name="v2-calendar-disconnect"),
    path("selected-calendars", SelectedCalendarsView.as_view(), name="v2-selected-calendars"),
    path("destination-calendars", DestinationCalendarsView.as_view(), name="v2-destination-calendars"),
    path("bookings/<str:uid>/references", BookingReferencesView.as_view(), name="v2-booking-references"),
]
