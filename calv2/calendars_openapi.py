"""The connected-calendar operations of the v2 document (calv2.views.calendars), built with
calv2.openapi_base's pieces and merged into `calv2.openapi.build`."""

from calv2.openapi_base import (
    BOOKING_UID,
    BOOLEAN,
    DATE_TIME,
    INTEGER,
    NULLABLE_INTEGER,
    NULLABLE_STRING,
    STRING,
    object_schema,
    operation_of,
    path_parameter,
    query_parameter,
    response_of,
    schema_ref,
    success_schema,
)

INTEGRATION = {
    "type": "string",
    "enum": ["apple_calendar", "caldav_calendar", "ics-feed_calendar", "google_calendar", "office365_calendar"],
}
CALENDAR_PATH = path_parameter(
    "calendar", {"type": "string", "enum": ["apple", "caldav", "ics-feed", "google", "office365"]}
)
CREDENTIALS_PATH = path_parameter("calendar", {"type": "string", "enum": ["apple", "caldav"]})
OAUTH_CALENDAR_PATH = path_parameter("calendar", {"type": "string", "enum": ["google", "office365"]})

CALENDAR = object_schema(
    {
        "externalId": STRING,
        "name": STRING,
        "readOnly": BOOLEAN,
        "isSelected": BOOLEAN,
        "credentialId": INTEGER,
        "integration": INTEGRATION,
        "primary": BOOLEAN,
        "email": STRING,
        "timeZone": STRING,
    }
)
CONNECTED_CALENDAR = object_schema(
    {
        "integration": object_schema(
            {
                "type": INTEGRATION,
                "slug": STRING,
                "title": STRING,
                "name": STRING,
                "categories": {"type": "array", "items": STRING},
                "installed": BOOLEAN,
            }
        ),
        "credentialId": INTEGER,
        "primary": {**CALENDAR, "nullable": True},
        "calendars": {"type": "array", "items": schema_ref("Calendar")},
        "health": {
            **object_schema(
                {"healthy": BOOLEAN, "lastSuccessAt": {**DATE_TIME, "nullable": True}, "error": NULLABLE_STRING}
            ),
            "description": "This service's extension: whether the busy time read from it is current, and why not.",
        },
    }
)
DESTINATION_CALENDAR = object_schema(
    {
        "id": INTEGER,
        "integration": INTEGRATION,
        "externalId": STRING,
        "primaryEmail": STRING,
        "userId": INTEGER,
        "eventTypeId": NULLABLE_INTEGER,
        "credentialId": INTEGER,
        "name": STRING,
        "primary": BOOLEAN,
        "readOnly": BOOLEAN,
        "email": STRING,
        "integrationTitle": STRING,
    }
)
CREDENTIAL = object_schema(
    {
        "id": INTEGER,
        "type": INTEGRATION,
        "userId": INTEGER,
        "teamId": NULLABLE_INTEGER,
        "appId": STRING,
        "invalid": BOOLEAN,
    }
)
SELECTION = object_schema(
    {"userId": INTEGER, "integration": INTEGRATION, "externalId": STRING, "credentialId": INTEGER}
)
BUSY_TIME = object_schema({"start": DATE_TIME, "end": DATE_TIME, "source": STRING})
REFERENCE = object_schema({"id": INTEGER, "type": STRING, "eventUid": STRING, "destinationCalendarId": NULLABLE_STRING})
STATUS_ONLY = object_schema(
    {"status": {"type": "string", "enum": ["success"]}, "data": {"type": "object", "nullable": True}}, ["status"]
)

SELECTION_BODY = {
    "type": "object",
    "required": ["integration", "externalId", "credentialId"],
    "properties": {"integration": INTEGRATION, "externalId": STRING, "credentialId": INTEGER},
}


def schemas() -> dict:
    return {
        "Calendar": CALENDAR,
        "ConnectedCalendar": CONNECTED_CALENDAR,
        "DestinationCalendar": DESTINATION_CALENDAR,
        "CalendarCredential": CREDENTIAL,
        "SelectedCalendar": SELECTION,
        "BusyTime": BUSY_TIME,
        "BookingReference": REFERENCE,
    }


def paths() -> dict:
    tag = "Calendars"
    return {
        "/v2/calendars": {
            "get": operation_of(
                "calendarsList",
                tag,
                "Connected calendars, which are selected, the destination, and each connection's health",
                {
                    "200": response_of(
                        success_schema(
                            object_schema(
                                {
                                    "connectedCalendars": {"type": "array", "items": schema_ref("ConnectedCalendar")},
                                    "destinationCalendar": {**DESTINATION_CALENDAR, "nullable": True},
                                }
                            )
                        )
                    )
                },
            )
        },
        "/v2/calendars/busy-times": {
            "get": operation_of(
                "calendarsBusyTimes",
                tag,
                "Busy times of the caller's selected calendars (the cached copy; never a live call)",
                {"200": response_of(success_schema({"type": "array", "items": schema_ref("BusyTime")}))},
                parameters=[
                    query_parameter("dateFrom", STRING, "ISO 8601 date or date-time.", required=True),
                    query_parameter(
                        "dateTo", STRING, "ISO 8601 date or date-time (a date: to its end).", required=True
                    ),
                    query_parameter("timeZone", STRING, "IANA zone of dateFrom/dateTo (or loggedInUsersTz)."),
                    query_parameter("loggedInUsersTz", STRING, "Deprecated name of timeZone."),
                    query_parameter(
                        "calendarsToLoad[0][credentialId]",
                        INTEGER,
                        "With calendarsToLoad[0][externalId] (and [1], [2] …): only these calendars.",
                    ),
                    query_parameter("calendarsToLoad[0][externalId]", STRING),
                ],
            )
        },
        "/v2/calendars/ics-feed/save": {
            "post": operation_of(
                "calendarsIcsFeedSave",
                tag,
                "Subscribe to ICS feeds (each URL is fetched once now; read-only)",
                {
                    "201": response_of(
                        success_schema(schema_ref("CalendarCredential")), "Created (the first feed's connection)"
                    )
                },
                body={
                    "type": "object",
                    "required": ["urls"],
                    "properties": {
                        "urls": {"type": "array", "minItems": 1, "maxItems": 10, "items": {"type": "string"}},
                        "readOnly": BOOLEAN,
                    },
                },
            )
        },
        "/v2/calendars/ics-feed/check": {
            "get": operation_of(
                "calendarsIcsFeedCheck",
                tag,
                "Whether the caller's ICS feeds are connected and read (400 naming why not)",
                {"200": response_of(STATUS_ONLY)},
            )
        },
        "/v2/calendars/{calendar}/credentials": {
            "post": operation_of(
                "calendarsCredentials",
                tag,
                "Connect Apple iCloud (username, app password) or a CalDAV server (this service's `caldav`: url too)",
                {"201": response_of(STATUS_ONLY, "Connected")},
                parameters=[CREDENTIALS_PATH],
                body={
                    "type": "object",
                    "required": ["username", "password"],
                    "properties": {
                        "username": STRING,
                        "password": {**STRING, "writeOnly": True},
                        "url": {**STRING, "description": "The CalDAV server (`caldav` only)."},
                    },
                },
            )
        },
        "/v2/calendars/{calendar}/connect": {
            "get": operation_of(
                "calendarsConnect",
                tag,
                "The OAuth consent URL of Google Calendar or Microsoft 365 for the caller (signed state, PKCE)",
                {"200": response_of(success_schema(object_schema({"authUrl": STRING})))},
                parameters=[
                    OAUTH_CALENDAR_PATH,
                    query_parameter(
                        "redir",
                        STRING,
                        "Where the browser goes after the callback: an http or https URL on a host the operator "
                        "lists, this service's, or one of the calling OAuth client's redirect URIs' hosts.",
                    ),
                    query_parameter("isDryRun", BOOLEAN, "Consent only: the callback stores nothing."),
                ],
            )
        },
        "/v2/calendars/{calendar}/save": {
            "get": {
                **operation_of(
                    "calendarsSave",
                    tag,
                    "The provider's OAuth callback: connects the account the state names, then redirects to `redir`",
                    {
                        "200": response_of(
                            success_schema({**CREDENTIAL, "nullable": True}),
                            "Connected (no `redir` was given; null for a dry run)",
                        ),
                        "301": {
                            "description": "To `redir` (with `error=` when the provider or the exchange failed)",
                            "headers": {"Location": {"schema": STRING}},
                        },
                    },
                    parameters=[
                        OAUTH_CALENDAR_PATH,
                        query_parameter(
                            "state", STRING, "The state of the consent URL, as the provider sends it back."
                        ),
                        query_parameter("code", STRING, "The provider's authorization code."),
                        query_parameter("error", STRING, "The provider's error (the user refused)."),
                    ],
                ),
                # The browser comes back from the provider with no credential: the signed state
                # names the user.
                "security": [],
            }
        },
        "/v2/calendars/{calendar}/check": {
            "get": operation_of(
                "calendarsCheck",
                tag,
                "Whether the caller's connection of this kind is read (400 naming why not)",
                {"200": response_of(STATUS_ONLY)},
                parameters=[CALENDAR_PATH],
            )
        },
        "/v2/calendars/{calendar}/disconnect": {
            "post": operation_of(
                "calendarsDisconnect",
                tag,
                "Disconnect a connection (its calendars and busy time are forgotten)",
                {"200": response_of(success_schema(schema_ref("CalendarCredential")))},
                parameters=[CALENDAR_PATH],
                body={"type": "object", "required": ["id"], "properties": {"id": INTEGER}},
                errors=(404,),
            )
        },
        "/v2/selected-calendars": {
            "post": operation_of(
                "selectedCalendarsAdd",
                "Selected Calendars",
                "Select a calendar: its busy time blocks slots",
                {"201": response_of(success_schema(schema_ref("SelectedCalendar")), "Selected")},
                body=SELECTION_BODY,
                errors=(404,),
            ),
            "delete": operation_of(
                "selectedCalendarsRemove",
                "Selected Calendars",
                "Unselect a calendar: its busy time no longer blocks slots",
                {"200": response_of(success_schema(schema_ref("SelectedCalendar")))},
                parameters=[
                    query_parameter("integration", INTEGRATION, required=True),
                    query_parameter("externalId", STRING, required=True),
                    query_parameter("credentialId", INTEGER, required=True),
                ],
                errors=(404,),
            ),
        },
        "/v2/destination-calendars": {
            "put": operation_of(
                "destinationCalendarsUpdate",
                "Destination Calendars",
                "Choose the calendar bookings are written into",
                {"200": response_of(success_schema(schema_ref("SelectedCalendar")))},
                body={
                    "type": "object",
                    "required": ["integration", "externalId"],
                    "properties": {"integration": INTEGRATION, "externalId": STRING},
                },
                errors=(404, 409),
            )
        },
        "/v2/bookings/{bookingUid}/references": {
            "get": operation_of(
                "bookingsReferences",
                "Bookings",
                "The calendar events written for a booking",
                {"200": response_of(success_schema({"type": "array", "items": schema_ref("BookingReference")}))},
                parameters=[BOOKING_UID],
                errors=(404,),
            )
        },
    }
