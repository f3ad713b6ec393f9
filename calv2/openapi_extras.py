"""Operations of the v2 document that Cal.com's MCP server, CLI and mobile app call beyond the
integrations' core (attendees and guests of a booking, conferencing apps, the OAuth 2.0 token
endpoint and client facts), built with calv2.openapi_base's pieces and added to the document's
paths by `calv2.openapi.build`."""

from calv2.openapi_base import (
    BOOKING_UID,
    EVENT_TYPE_ID,
    INTEGER,
    NULLABLE_STRING,
    STRING,
    booking_action,
    error_answers,
    object_schema,
    operation_of,
    path_parameter,
    response_of,
    schema_ref,
    success_schema,
)
from calv2.team_openapi import TEAM_HOST

GUEST = {
    "type": "object",
    "required": ["email"],
    "properties": {
        "email": {"type": "string", "format": "email"},
        "name": {"type": "string", "maxLength": 200},
        "timeZone": {"type": "string", "description": "IANA time zone; default: the booker's."},
        "phoneNumber": {"type": "string", "maxLength": 50, "description": "Validated, not kept."},
        "language": {"type": "string", "maxLength": 35},
    },
}
ADD_GUESTS = {
    "type": "object",
    "required": ["guests"],
    "properties": {"guests": {"type": "array", "items": GUEST, "minItems": 1, "maxItems": 10}},
}
CONFERENCING_APP = object_schema(
    {"id": INTEGER, "type": STRING, "userId": INTEGER, "invalid": {"type": "boolean", "nullable": True}},
    ["id", "type", "userId"],
)
OAUTH_TOKEN_REQUEST = {
    "type": "object",
    "required": ["client_id", "grant_type"],
    "properties": {
        "client_id": STRING,
        "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]},
        "code": STRING,
        "redirect_uri": STRING,
        "code_verifier": STRING,
        "client_secret": STRING,
        "refresh_token": STRING,
    },
}
OAUTH_TOKENS = object_schema(
    {
        "access_token": STRING,
        "token_type": STRING,
        "refresh_token": STRING,
        "expires_in": INTEGER,
        "scope": STRING,
    },
    ["access_token", "token_type", "refresh_token", "expires_in"],
)
OAUTH_ERROR = object_schema({"error": STRING, "error_description": STRING}, ["error"])
OAUTH_CLIENT = object_schema(
    {
        "client_id": STRING,
        "redirect_uri": STRING,
        "name": STRING,
        "logo": NULLABLE_STRING,
        "is_trusted": {"type": "boolean"},
        "client_type": {"type": "string", "enum": ["CONFIDENTIAL", "PUBLIC"]},
    }
)
ATTENDEE_ID = path_parameter("attendeeId", {"type": "integer"})
BOOKING_LOCATION = {
    "type": "object",
    "required": ["location"],
    "properties": {
        "location": {
            "oneOf": [STRING, {"type": "object", "required": ["type"], "properties": {"type": STRING}}],
            "description": "As when booking: a string, or Cal.com's location object.",
        }
    },
}
PRIVATE_LINK_INPUT = {
    "type": "object",
    "properties": {
        "expiresAt": {"type": "string", "format": "date-time", "description": "A time-based link."},
        "maxUsageCount": {"type": "integer", "minimum": 1, "description": "A usage-based link (default 1)."},
    },
}
PRIVATE_LINK = {
    "oneOf": [
        object_schema(
            {
                "linkId": STRING,
                "eventTypeId": INTEGER,
                "bookingUrl": STRING,
                "isExpired": {"type": "boolean"},
                "expiresAt": STRING,
            }
        ),
        object_schema(
            {
                "linkId": STRING,
                "eventTypeId": INTEGER,
                "bookingUrl": STRING,
                "isExpired": {"type": "boolean"},
                "maxUsageCount": INTEGER,
                "usageCount": INTEGER,
            }
        ),
    ]
}
LINK_ID = path_parameter("linkId", {"type": "string"})
SCHEDULING_HOST = {
    **TEAM_HOST,
    "properties": {
        **TEAM_HOST["properties"],
        "groupId": {**NULLABLE_STRING, "description": "Round robin only: always null (no host groups)."},
    },
}
SCHEDULING_CONFIG = {
    "type": "object",
    "description": "A team event type's hosts; round robin adds its settings as this service applies them "
    "(no host groups, weights always on, no lead threshold, no-show or CRM rules).",
    "required": ["eventTypeId", "schedulingType", "hosts", "assignAllTeamMembers"],
    "properties": {
        "eventTypeId": INTEGER,
        "schedulingType": {"type": "string", "enum": ["roundRobin", "collective"]},
        "hosts": {"type": "array", "items": SCHEDULING_HOST},
        "assignAllTeamMembers": {"type": "boolean"},
        "hostGroups": {"type": "array", "maxItems": 0, "items": {"type": "object"}},
        "rescheduleWithSameRoundRobinHost": {"type": "boolean"},
        "isRRWeightsEnabled": {"type": "boolean"},
        "maxLeadThreshold": {"type": "integer", "nullable": True},
        "includeNoShowInRRCalculation": {"type": "boolean"},
        "crmRecordOwnerFallbackWindowHours": {"type": "integer", "nullable": True},
    },
    "additionalProperties": False,
}
REFRESH_API_KEY = {
    "type": "object",
    "properties": {
        "apiKeyDaysValid": {"type": "integer", "minimum": 1, "maximum": 3650, "description": "Default 30."},
        "apiKeyNeverExpires": {"type": "boolean"},
    },
}
RESERVATION_UID = path_parameter("uid", {"type": "string"})
OOO_ID = path_parameter("oooId", {"type": "integer"})
RESERVE_SLOT = {
    "type": "object",
    "required": ["eventTypeId", "slotStart"],
    "properties": {
        "eventTypeId": {"type": "integer", "minimum": 1},
        "slotStart": {"type": "string", "format": "date-time", "description": "A slot GET /v2/slots offers."},
        "slotDuration": {"type": "integer", "description": "Must be the event type's length."},
        "reservationDuration": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1440,
            "description": "Minutes the slot stays held (default 5).",
        },
    },
}
RESERVATION = object_schema(
    {
        "eventTypeId": INTEGER,
        "slotStart": STRING,
        "slotEnd": STRING,
        "slotDuration": INTEGER,
        "reservationUid": STRING,
        "reservationDuration": INTEGER,
        "reservationUntil": STRING,
    }
)
OOO_REASONS = {"type": "string", "enum": ["unspecified", "vacation", "travel", "sick", "public_holiday"]}
OOO_INPUT_PROPERTIES = {
    "start": {"type": "string", "format": "date-time"},
    "end": {"type": "string", "format": "date-time", "description": "After start."},
    "notes": {"type": "string", "maxLength": 2000},
    "toUserId": {"type": "integer", "nullable": True, "description": "Who covers (Cal.com's redirect)."},
    "reason": OOO_REASONS,
}
OOO_CREATE = {"type": "object", "required": ["start", "end"], "properties": OOO_INPUT_PROPERTIES}
OOO_UPDATE = {"type": "object", "properties": OOO_INPUT_PROPERTIES}
OOO_ENTRY = object_schema(
    {
        "userId": INTEGER,
        "toUserId": {"type": "integer", "nullable": True},
        "id": INTEGER,
        "uuid": STRING,
        "start": STRING,
        "end": STRING,
        "notes": STRING,
        "reason": OOO_REASONS,
    }
)


def _oauth_answer(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def paths() -> dict:
    one_booking = response_of(success_schema(schema_ref("Booking_2024_08_13")))
    attendee = schema_ref("BookingAttendee_2024_08_13")
    attendees_tag = "Bookings / Attendees"
    return {
        "/v2/bookings/{bookingUid}/attendees/{attendeeId}": {
            "get": operation_of(
                "bookingsGetAttendee",
                attendees_tag,
                "One attendee of a booking",
                {"200": response_of(success_schema(attendee))},
                parameters=[BOOKING_UID, ATTENDEE_ID],
                errors=(404,),
            )
        },
        "/v2/bookings/{bookingUid}/guests": booking_action(
            "bookingsAddGuests",
            "Add guests to a booking (at most 10 per request; all or none)",
            {"200": one_booking},
            body=ADD_GUESTS,
            tag="Bookings / Guests",
        ),
        "/v2/slots/reservations": {
            "post": operation_of(
                "slotsReserve",
                "Slots",
                "Hold a free slot (busy for everyone until it expires)",
                {"201": response_of(success_schema(RESERVATION), "Created")},
                body=RESERVE_SLOT,
                errors=(404, 409),
            )
        },
        "/v2/slots/reservations/{uid}": {
            "get": operation_of(
                "slotsReservationGet",
                "Slots",
                "A live reservation (data null once it expired or was freed)",
                {"200": response_of(success_schema({**RESERVATION, "nullable": True}))},
                parameters=[RESERVATION_UID],
            ),
            "patch": operation_of(
                "slotsReservationUpdate",
                "Slots",
                "Move or renew a reservation",
                {"200": response_of(success_schema(RESERVATION))},
                parameters=[RESERVATION_UID],
                body=RESERVE_SLOT,
                errors=(404, 409),
            ),
            "delete": operation_of(
                "slotsReservationDelete",
                "Slots",
                "Free a reservation",
                {"200": response_of(success_schema({"nullable": True}))},
                parameters=[RESERVATION_UID],
                errors=(404,),
            ),
        },
        "/v2/me/ooo": {
            "get": operation_of(
                "meOooList",
                "Me / Out of office",
                "The caller's out-of-office entries",
                {"200": response_of(success_schema({"type": "array", "items": OOO_ENTRY}))},
            ),
            "post": operation_of(
                "meOooCreate",
                "Me / Out of office",
                "Record an absence (its time is busy for every event type the caller hosts)",
                {"201": response_of(success_schema(OOO_ENTRY), "Created")},
                body=OOO_CREATE,
            ),
        },
        "/v2/me/ooo/{oooId}": {
            "get": operation_of(
                "meOooGet",
                "Me / Out of office",
                "One out-of-office entry",
                {"200": response_of(success_schema(OOO_ENTRY))},
                parameters=[OOO_ID],
                errors=(404,),
            ),
            "patch": operation_of(
                "meOooUpdate",
                "Me / Out of office",
                "Change an out-of-office entry",
                {"200": response_of(success_schema(OOO_ENTRY))},
                parameters=[OOO_ID],
                body=OOO_UPDATE,
                errors=(404,),
            ),
            "delete": operation_of(
                "meOooDelete",
                "Me / Out of office",
                "Delete an out-of-office entry",
                {"200": response_of(success_schema(OOO_ENTRY))},
                parameters=[OOO_ID],
                errors=(404,),
            ),
        },
        "/v2/bookings/{bookingUid}/location": {
            "patch": operation_of(
                "bookingsUpdateLocation",
                "Bookings",
                "Change a booking's location (its host side; accepted or pending bookings)",
                {"200": one_booking},
                parameters=[BOOKING_UID],
                body=BOOKING_LOCATION,
                errors=(404, 409),
            )
        },
        "/v2/api-keys/refresh": {
            "post": operation_of(
                "apiKeysRefresh",
                "API Keys",
                "Replace the API key the request is made with (the old one stops working)",
                {"200": response_of(success_schema(object_schema({"apiKey": STRING})))},
                body=REFRESH_API_KEY,
            )
        },
        "/v2/event-types/{eventTypeId}/scheduling-config": {
            "get": operation_of(
                "eventTypeSchedulingConfig",
                "Event Types",
                "A team event type's scheduling configuration: hosts and round-robin settings (422 for "
                "an event type that is not a team's with hosts)",
                {"200": response_of(success_schema(SCHEDULING_CONFIG))},
                parameters=[EVENT_TYPE_ID],
                errors=(404, 422),
            )
        },
        "/v2/event-types/{eventTypeId}/private-links": {
            "get": operation_of(
                "privateLinksList",
                "Event Types / Private Links",
                "The event type's private links (for whoever may change the event type)",
                {"200": response_of(success_schema({"type": "array", "items": PRIVATE_LINK}))},
                parameters=[EVENT_TYPE_ID],
                errors=(404,),
            ),
            "post": operation_of(
                "privateLinksCreate",
                "Event Types / Private Links",
                "Create a private link (time-based with expiresAt, else usage-based)",
                {"201": response_of(success_schema(PRIVATE_LINK), "Created")},
                parameters=[EVENT_TYPE_ID],
                body=PRIVATE_LINK_INPUT,
                errors=(404,),
            ),
        },
        "/v2/event-types/{eventTypeId}/private-links/{linkId}": {
            "patch": operation_of(
                "privateLinksUpdate",
                "Event Types / Private Links",
                "Change a link's expiry or its maximum uses (not its kind)",
                {"200": response_of(success_schema(PRIVATE_LINK))},
                parameters=[EVENT_TYPE_ID, LINK_ID],
                body=PRIVATE_LINK_INPUT,
                errors=(404,),
            ),
            "delete": operation_of(
                "privateLinksDelete",
                "Event Types / Private Links",
                "Delete a private link",
                {"200": response_of(success_schema(object_schema({"linkId": STRING, "message": STRING})))},
                parameters=[EVENT_TYPE_ID, LINK_ID],
                errors=(404,),
            ),
        },
        "/v2/conferencing": {
            "get": operation_of(
                "conferencingList",
                "Conferencing",
                "The caller's connected conferencing apps (none: this service connects none)",
                {"200": response_of(success_schema({"type": "array", "items": CONFERENCING_APP}))},
            )
        },
    }


def oauth_paths() -> dict:
    """Plain OAuth endpoints: no cal-api-version, no Idempotency-Key, no credentials."""
    token_errors = {
        code: _oauth_answer(OAUTH_ERROR, f"RFC 6749 error ({description})")
        for code, description in (("400", "invalid_request, invalid_grant, …"), ("401", "invalid_client"))
    }
    return {
        "/v2/auth/oauth2/token": {
            "post": {
                "operationId": "oauth2Token",
                "tags": ["OAuth2"],
                "summary": "The token endpoint (RFC 6749): authorization_code and refresh_token grants",
                "description": "JSON or form body; the answer is RFC 6749's, not the v2 envelope. The same "
                "endpoint as /api/auth/oauth/token.",
                "security": [],
                "parameters": [],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": OAUTH_TOKEN_REQUEST},
                        "application/x-www-form-urlencoded": {"schema": OAUTH_TOKEN_REQUEST},
                    },
                },
                "responses": {**error_answers(405), **token_errors, "200": _oauth_answer(OAUTH_TOKENS, "Tokens")},
            }
        },
        "/v2/auth/oauth2/clients/{clientId}": {
            "get": {
                "operationId": "oauth2ClientGet",
                "tags": ["OAuth2"],
                "summary": "A registered OAuth client's public facts (no credentials needed)",
                "security": [],
                "parameters": [path_parameter("clientId", {"type": "string"})],
                "responses": {"200": response_of(success_schema(OAUTH_CLIENT)), **error_answers(404, 405)},
            }
        },
    }


def event_type_webhooks_delete_operation() -> dict:
    """`DELETE /v2/event-types/{eventTypeId}/webhooks`, beside the list and create of that path."""
    return operation_of(
        "eventTypeWebhooksDeleteAll",
        "Event Types / Webhooks",
        "Delete every webhook of the event type that the caller manages",
        {"200": response_of(success_schema({"type": "string", "example": "2 webhooks deleted"}))},
        parameters=[EVENT_TYPE_ID],
        errors=(404,),
    )


def attendee_list_operation() -> dict:
    """`GET /v2/bookings/{bookingUid}/attendees`, beside the add-attendee POST of the same path."""
    return operation_of(
        "bookingsListAttendees",
        "Bookings / Attendees",
        "The attendees of a booking (guests included)",
        {"200": response_of(success_schema({"type": "array", "items": schema_ref("BookingAttendee_2024_08_13")}))},
        parameters=[BOOKING_UID],
        errors=(404,),
    )
