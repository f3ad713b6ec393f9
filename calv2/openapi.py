"""The v2 OpenAPI 3.0 document (`GET /v2/openapi.json`), a second document beside v1's.

Written here as data rather than generated from the views: the v2 views are thin translations whose
answers depend on `cal-api-version`, which a generator cannot see; the schemas below are the
shapes of calv2.shapes and the operations of calv2.urls, and the tests check every v2 answer they
receive against this document (calv2/tests/documented.py, applied by calv2/tests/conftest.py).
"""

import functools

from django.conf import settings
from django.http import JsonResponse

from calv2 import calendars_openapi, openapi_extras, team_openapi
from calv2.openapi_base import (
    BOOKING_UID,
    BOOLEAN,
    DATE_TIME,
    EVENT_TYPE_ID,
    FREE_OBJECT,
    INTEGER,
    NULLABLE_INTEGER,
    NULLABLE_STRING,
    STRING,
    booking_action,
    error_answers,
    object_schema,
    operation_of,
    path_parameter,
    query_parameter,
    response_of,
    schema_ref,
    success_schema,
)
from calv2.wire import EXCEPTIONS
from core.idempotency import HEADER as IDEMPOTENCY_HEADER
from core.idempotency import WRITE_METHODS
from core.openapi import IDEMPOTENCY_PARAMETER as V1_IDEMPOTENCY_PARAMETER
from core.openapi import REPLAYED_HEADERS
from webhooks.models import WebhookTrigger

PERSON = object_schema({"id": INTEGER, "name": STRING, "email": STRING, "username": STRING, "timeZone": STRING})
ATTENDEE = object_schema(
    {
        "name": STRING,
        "email": STRING,
        "displayEmail": STRING,
        "timeZone": STRING,
        "language": STRING,
        "absent": BOOLEAN,
    }
)
BOOKING_REQUIRED = [
    "id",
    "uid",
    "title",
    "description",
    "hosts",
    "status",
    "start",
    "end",
    "duration",
    "eventTypeId",
    "eventType",
    "meetingUrl",
    "location",
    "absentHost",
    "createdAt",
    "updatedAt",
    "metadata",
    "rating",
    "icsUid",
    "attendees",
    "guests",
    "bookingFieldsResponses",
]
BOOKING = object_schema(
    {
        "id": INTEGER,
        "uid": STRING,
        "title": STRING,
        "description": STRING,
        "hosts": {"type": "array", "items": PERSON},
        "status": {"type": "string", "enum": ["accepted", "pending", "cancelled", "rejected"]},
        "start": DATE_TIME,
        "end": DATE_TIME,
        "duration": INTEGER,
        "eventTypeId": NULLABLE_INTEGER,
        "eventType": {**object_schema({"id": INTEGER, "slug": STRING}), "nullable": True},
        "meetingUrl": NULLABLE_STRING,
        "location": NULLABLE_STRING,
        "absentHost": BOOLEAN,
        "createdAt": DATE_TIME,
        "updatedAt": DATE_TIME,
        "metadata": FREE_OBJECT,
        "rating": NULLABLE_INTEGER,
        "icsUid": STRING,
        "attendees": {"type": "array", "items": ATTENDEE},
        "guests": {"type": "array", "items": STRING},
        "bookingFieldsResponses": FREE_OBJECT,
        "rescheduledFromUid": STRING,
        "rescheduledToUid": STRING,
        "reschedulingReason": STRING,
        "cancellationReason": STRING,
        "cancelledByEmail": STRING,
        "recurringBookingUid": {**STRING, "description": "The series of an occurrence of a recurring event type."},
    },
    BOOKING_REQUIRED,
)
OFFSET_PAGINATION = object_schema(
    {
        "totalItems": {
            "type": "integer",
            "description": (
                "The bookings the filters match: exact up to 10,000 (`totalItemsIsExact`), above that PostgreSQL's "
                "estimate; `remainingItems` and `totalPages` follow it. `hasNextPage` never depends on it."
            ),
        },
        "totalItemsIsExact": {
            "type": "boolean",
            "description": "Whether `totalItems` is exact; false when more than 10,000 bookings match.",
        },
        "remainingItems": INTEGER,
        "returnedItems": INTEGER,
        "itemsPerPage": INTEGER,
        "currentPage": INTEGER,
        "totalPages": INTEGER,
        "hasNextPage": BOOLEAN,
        "hasPreviousPage": BOOLEAN,
    }
)
CURSOR_PAGINATION = object_schema({"nextCursor": NULLABLE_STRING, "hasMore": BOOLEAN})
WEBHOOK = object_schema(
    {
        "id": {"type": "string", "format": "uuid"},
        "triggers": {"type": "array", "items": {"type": "string", "enum": list(WebhookTrigger.values)}},
        "subscriberUrl": STRING,
        "active": BOOLEAN,
        "payloadTemplate": NULLABLE_STRING,
        "userId": NULLABLE_INTEGER,
        "eventTypeId": INTEGER,
        "secret": {"type": "string", "description": "The signing secret; absent when the webhook has none."},
    },
    ["id", "triggers", "subscriberUrl", "active", "payloadTemplate"],
)
ME = object_schema(
    {
        "id": INTEGER,
        "username": STRING,
        "email": STRING,
        "name": NULLABLE_STRING,
        "avatarUrl": NULLABLE_STRING,
        "bio": NULLABLE_STRING,
        "timeFormat": {"type": "integer", "enum": [12, 24]},
        "defaultScheduleId": NULLABLE_INTEGER,
        "weekStart": STRING,
        "timeZone": STRING,
        "locale": STRING,
        "organizationId": NULLABLE_INTEGER,
    }
)
EMAIL_SETTINGS = {
    "type": "object",
    "description": "Cal.com's emailSettings: turn off the standard e-mails (confirmations, reminders, "
    "cancellations) to the attendees or to the hosts of this event type's bookings.",
    "properties": {"disableEmailsToAttendees": BOOLEAN, "disableEmailsToHosts": BOOLEAN},
}
REMINDERS = {
    "type": "array",
    "description": "This service's extension: e-mail reminders, each so many minutes before the start, "
    "to the attendee, the organizer or both (docs/notifications.md).",
    "maxItems": 5,
    "items": {
        "type": "object",
        "required": ["minutesBefore"],
        "properties": {
            "minutesBefore": {"type": "integer", "minimum": 1, "maximum": 10080},
            "to": {"type": "string", "enum": ["attendee", "organizer", "both"], "default": "attendee"},
        },
    },
}


def _interval_limits(*, what: str, minimum_note: str, input_schema: bool) -> dict:
    """Cal.com's `BookingLimitsCount_2024_06_14` / `BookingLimitsDuration_2024_06_14`."""
    number = {"type": "integer", "minimum": 1}
    properties = {unit: number for unit in ("day", "week", "month", "year")}
    description = (
        f"At most this many {what} of the event type per calendar day, week (from Sunday), month or year in "
        f"the host's time zone; a longer period's limit may not be below a shorter one's{minimum_note}. "
    )
    if input_schema:
        properties = {**properties, "disabled": BOOLEAN}
        description += 'null or `{"disabled": true}`: no limits.'
    else:
        description += "Left out when the event type has none."
    return {"type": "object", "additionalProperties": False, "properties": properties, "description": description}


BOOKING_LIMITS_COUNT = _interval_limits(what="bookings", minimum_note="", input_schema=False)
BOOKING_LIMITS_DURATION = _interval_limits(
    what="minutes of bookings", minimum_note=" (a booking is refused when it would pass it)", input_schema=False
)
BOOKING_LIMITS_COUNT_INPUT = {
    **_interval_limits(what="bookings", minimum_note="", input_schema=True),
    "nullable": True,
}
BOOKING_LIMITS_DURATION_INPUT = {
    **_interval_limits(
        what="minutes of bookings", minimum_note=" (a booking is refused when it would pass it)", input_schema=True
    ),
    "nullable": True,
}
EVENT_TYPE = object_schema(
    {
        "id": INTEGER,
        "ownerId": NULLABLE_INTEGER,
        "teamId": INTEGER,
        "lengthInMinutes": INTEGER,
        "title": STRING,
        "slug": STRING,
        "description": STRING,
        "locations": {"type": "array", "items": FREE_OBJECT},
        "bookingFields": {"type": "array", "items": FREE_OBJECT},
        "disableGuests": BOOLEAN,
        "slotInterval": NULLABLE_INTEGER,
        "minimumBookingNotice": INTEGER,
        "beforeEventBuffer": INTEGER,
        "afterEventBuffer": INTEGER,
        "recurrence": {
            **object_schema(
                {
                    "frequency": {"type": "string", "enum": ["yearly", "monthly", "weekly"]},
                    "interval": INTEGER,
                    "occurrences": INTEGER,
                }
            ),
            "nullable": True,
        },
        "metadata": FREE_OBJECT,
        "price": INTEGER,
        "currency": STRING,
        "lockTimeZoneToggleOnBookingPage": BOOLEAN,
        "seatsPerTimeSlot": NULLABLE_INTEGER,
        "forwardParamsSuccessRedirect": {"type": "boolean", "nullable": True},
        "successRedirectUrl": NULLABLE_STRING,
        "isInstantEvent": BOOLEAN,
        "seatsShowAvailabilityCount": {"type": "boolean", "nullable": True},
        "scheduleId": NULLABLE_INTEGER,
        "hidden": BOOLEAN,
        "requiresConfirmation": BOOLEAN,
        "bookingRequiresAuthentication": BOOLEAN,
        "bookingLimitsCount": BOOKING_LIMITS_COUNT,
        "bookingLimitsDuration": BOOKING_LIMITS_DURATION,
        "emailSettings": EMAIL_SETTINGS,
        "reminders": REMINDERS,
    },
    [
        "id",
        "ownerId",
        "lengthInMinutes",
        "title",
        "slug",
        "description",
        "locations",
        "bookingFields",
        "disableGuests",
        "slotInterval",
        "minimumBookingNotice",
        "beforeEventBuffer",
        "afterEventBuffer",
        "recurrence",
        "metadata",
        "price",
        "currency",
        "lockTimeZoneToggleOnBookingPage",
        "seatsPerTimeSlot",
        "forwardParamsSuccessRedirect",
        "successRedirectUrl",
        "isInstantEvent",
        "seatsShowAvailabilityCount",
        "scheduleId",
        "hidden",
        "requiresConfirmation",
        "bookingRequiresAuthentication",
        "emailSettings",
        "reminders",
    ],
)
LEGACY_EVENT_TYPE = object_schema(
    {
        "id": INTEGER,
        "title": STRING,
        "slug": STRING,
        "description": STRING,
        "length": INTEGER,
        "hidden": BOOLEAN,
        "price": INTEGER,
        "currency": STRING,
        "requiresConfirmation": BOOLEAN,
        "minimumBookingNotice": INTEGER,
        "beforeEventBuffer": INTEGER,
        "afterEventBuffer": INTEGER,
        "slotInterval": NULLABLE_INTEGER,
        "scheduleId": NULLABLE_INTEGER,
        "userId": NULLABLE_INTEGER,
        "teamId": NULLABLE_INTEGER,
    }
)
LEGACY_BOOKING = {
    "type": "object",
    "description": "The booking under its stored names, as /v1/bookings shows it.",
    "required": ["id", "uid", "status", "startTime", "endTime", "attendees"],
    "properties": {"id": INTEGER, "uid": STRING, "status": STRING, "startTime": DATE_TIME, "endTime": DATE_TIME},
    "additionalProperties": True,
}
LEGACY_BOOKINGS = object_schema(
    {
        "bookings": {"type": "array", "items": schema_ref("Booking_2024_04_15")},
        "recurringInfo": {"type": "array", "items": FREE_OBJECT},
        "nextCursor": NULLABLE_INTEGER,
    }
)
PROFILE = object_schema({"slug": STRING, "name": STRING})
EVENT_TYPE_GROUPS = object_schema(
    {
        "eventTypeGroups": {
            "type": "array",
            "items": object_schema(
                {
                    "teamId": NULLABLE_INTEGER,
                    "profile": PROFILE,
                    "eventTypes": {"type": "array", "items": schema_ref("EventType_2024_04_15")},
                }
            ),
        },
        "profiles": {"type": "array", "items": PROFILE},
    }
)
SLOT = object_schema(
    {"start": STRING, "end": STRING, "hosts": {"type": "array", "items": team_openapi.SLOT_HOST}}, ["start"]
)
SLOTS = {"type": "object", "additionalProperties": {"type": "array", "items": SLOT}}
ERROR = object_schema(
    {
        "status": {"type": "string", "enum": ["error"]},
        "timestamp": DATE_TIME,
        "path": STRING,
        "error": object_schema(
            {
                "code": {"type": "string", "enum": sorted({code for code, _ in EXCEPTIONS.values()})},
                "message": STRING,
                "details": object_schema(
                    {
                        "message": STRING,
                        "error": STRING,
                        "statusCode": INTEGER,
                        "code": NULLABLE_STRING,
                        "errors": {"type": "object", "additionalProperties": {"type": "array", "items": STRING}},
                    },
                    ["message", "error", "statusCode", "code"],
                ),
            }
        ),
    }
)

# --- request bodies ---------------------------------------------------------------------------

TRIGGERS = {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(WebhookTrigger.values)}}
WEBHOOK_CREATE = {
    "type": "object",
    "required": ["active", "subscriberUrl", "triggers"],
    "properties": {
        "active": BOOLEAN,
        "subscriberUrl": {"type": "string", "maxLength": 2048},
        "triggers": TRIGGERS,
        "payloadTemplate": {"type": "string", "nullable": True},
        "secret": {"type": "string", "nullable": True, "maxLength": 256},
    },
}
WEBHOOK_UPDATE = {**WEBHOOK_CREATE, "required": []}
del WEBHOOK_UPDATE["required"]
ATTENDEE_INPUT = {
    "type": "object",
    "required": ["name", "email", "timeZone"],
    "properties": {
        "name": {"type": "string", "maxLength": 200},
        "email": {"type": "string", "format": "email"},
        "timeZone": {"type": "string", "description": "IANA time zone."},
        "phoneNumber": {"type": "string", "maxLength": 50},
        "language": {"type": "string", "maxLength": 35},
    },
}
# Fields Cal.com's booking input knows for what this service does not do: refused by name (400).
REFUSED_BOOLEAN = {"type": "boolean", "description": "Not supported: `true` is a 400 naming the field."}
BOOKING_CREATE = {
    "type": "object",
    "description": "The event type by `eventTypeId`, or by `eventTypeSlug` with `username` or `teamSlug`. "
    "A recurring event type books a series (`recurrenceCount` occurrences, by default all of them); "
    "the answer is then the list of its bookings.",
    "required": ["start", "attendee"],
    "properties": {
        "start": {**DATE_TIME, "description": "A slot of GET /v2/slots (any offset; UTC recommended)."},
        "eventTypeId": {"type": "integer", "minimum": 1},
        "eventTypeSlug": {"type": "string", "maxLength": 200},
        "username": {"type": "string", "maxLength": 200, "description": "With eventTypeSlug: the owner."},
        "teamSlug": {"type": "string", "maxLength": 200, "description": "With eventTypeSlug: the team."},
        "organizationSlug": {**NULLABLE_STRING, "description": "Not supported: a value is a 400."},
        "attendee": ATTENDEE_INPUT,
        "guests": {"type": "array", "maxItems": 50, "items": {"type": "string", "format": "email"}},
        "location": {"oneOf": [STRING, {"type": "object", "required": ["type"], "properties": {"type": STRING}}]},
        "meetingUrl": {"type": "string", "maxLength": 1000, "description": "The location, when none is sent."},
        "metadata": FREE_OBJECT,
        "bookingFieldsResponses": FREE_OBJECT,
        "lengthInMinutes": {"type": "integer", "minimum": 1},
        "recurrenceCount": {"type": "integer", "minimum": 1, "description": "Occurrences of a recurring event type."},
        "reservationUid": {
            "type": "string",
            "maxLength": 64,
            "description": "A slot reservation holding this slot (POST /v2/slots/reservations): the booking takes "
            "the held slot and frees the reservation. One holding another slot is a 400; one naming no unexpired "
            "reservation frees nothing.",
        },
        "instant": REFUSED_BOOLEAN,
        "allowConflicts": REFUSED_BOOLEAN,
        "allowBookingOutOfBounds": REFUSED_BOOLEAN,
    },
}
LEGACY_BOOKING_CREATE = {
    "type": "object",
    "description": "2024-04-15 (and no cal-api-version): Cal.com v1's booking body, as POST /v1/bookings takes it.",
    "required": ["start", "eventTypeId", "timeZone"],
    "properties": {
        "start": DATE_TIME,
        "eventTypeId": INTEGER,
        "timeZone": STRING,
        "responses": FREE_OBJECT,
        "hashedLink": {**NULLABLE_STRING, "description": "A private link of the event type, as in POST /v1/bookings."},
    },
}
BOOKING_RESCHEDULE = {
    "type": "object",
    "required": ["start"],
    "properties": {"start": DATE_TIME, "reschedulingReason": {"type": "string", "maxLength": 5000}},
}
MARK_ABSENT = {
    "type": "object",
    "description": "At least one of host and attendees.",
    "properties": {
        "host": {"type": "boolean", "description": "Whether the host was absent."},
        "attendees": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["email", "absent"],
                "properties": {"email": {"type": "string", "format": "email"}, "absent": BOOLEAN},
            },
        },
    },
}
# Add-attendee's body is the booking's attendee; `phoneNumber` is validated, not kept.
ADD_ATTENDEE = ATTENDEE_INPUT
ADDED_ATTENDEE = object_schema({"id": INTEGER, "bookingId": INTEGER, **ATTENDEE["properties"]})
BOOKING_DECLINE = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 5000}}}
ME_UPDATE = {
    "type": "object",
    "properties": {
        "name": STRING,
        "email": {"type": "string", "format": "email"},
        "bio": STRING,
        "avatarUrl": STRING,
        "timeZone": STRING,
        "weekStart": {
            "type": "string",
            "enum": ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
        },
        "timeFormat": {"type": "integer", "enum": [12, 24]},
        "locale": STRING,
        "defaultScheduleId": INTEGER,
    },
}
TEAM = object_schema(
    {
        "id": INTEGER,
        "name": STRING,
        "slug": STRING,
        "bio": NULLABLE_STRING,
        "logoUrl": NULLABLE_STRING,
        "hideBranding": BOOLEAN,
        "isOrganization": BOOLEAN,
        "parentId": NULLABLE_INTEGER,
    }
)
HH_MM = {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"}
WEEKDAY_ENUM = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
WEEKLY = object_schema(
    {"days": {"type": "array", "items": {"type": "string", "enum": WEEKDAY_ENUM}}, "startTime": HH_MM, "endTime": HH_MM}
)
OVERRIDE = object_schema({"date": {"type": "string", "format": "date"}, "startTime": HH_MM, "endTime": HH_MM})
SCHEDULE = object_schema(
    {
        "id": INTEGER,
        "ownerId": INTEGER,
        "name": STRING,
        "timeZone": STRING,
        "availability": {"type": "array", "items": WEEKLY},
        "isDefault": BOOLEAN,
        "overrides": {"type": "array", "items": OVERRIDE},
    }
)
SCHEDULE_CREATE = {
    "type": "object",
    "required": ["name", "timeZone", "isDefault"],
    "properties": {
        "name": {"type": "string", "maxLength": 200},
        "timeZone": STRING,
        "isDefault": BOOLEAN,
        "availability": {"type": "array", "items": WEEKLY, "description": "Default: Monday-Friday 09:00-17:00."},
        "overrides": {"type": "array", "items": OVERRIDE},
    },
}
SCHEDULE_UPDATE = {"type": "object", "properties": SCHEDULE_CREATE["properties"]}
EVENT_TYPE_CREATE = {
    "type": "object",
    "required": ["lengthInMinutes", "title", "slug"],
    "properties": {
        "lengthInMinutes": {"type": "integer", "minimum": 1, "maximum": 1440},
        "title": {"type": "string", "maxLength": 200},
        "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
        "description": STRING,
        "hidden": BOOLEAN,
        "scheduleId": NULLABLE_INTEGER,
        "price": {"type": "integer", "minimum": 0},
        "currency": {"type": "string", "pattern": "^[a-zA-Z]{3}$"},
        "requiresConfirmation": BOOLEAN,
        "minimumBookingNotice": {"type": "integer", "minimum": 0},
        "beforeEventBuffer": {"type": "integer", "minimum": 0},
        "afterEventBuffer": {"type": "integer", "minimum": 0},
        "slotInterval": {"type": "integer", "minimum": 1, "nullable": True},
        "recurrence": {
            "type": "object",
            "nullable": True,
            "description": 'How a booking repeats; null or `{"disabled": true}`: it does not. Not with a price.',
            "properties": {
                "frequency": {"type": "string", "enum": ["yearly", "monthly", "weekly"]},
                "interval": {"type": "integer", "minimum": 1, "maximum": 20},
                "occurrences": {"type": "integer", "minimum": 1, "maximum": 24},
                "disabled": BOOLEAN,
            },
        },
        "bookingLimitsCount": BOOKING_LIMITS_COUNT_INPUT,
        "bookingLimitsDuration": BOOKING_LIMITS_DURATION_INPUT,
        "emailSettings": EMAIL_SETTINGS,
        "reminders": REMINDERS,
    },
}
EVENT_TYPE_UPDATE = {"type": "object", "properties": EVENT_TYPE_CREATE["properties"]}
DELETED_EVENT_TYPE = object_schema({"id": INTEGER, "lengthInMinutes": INTEGER, "title": STRING, "slug": STRING})
TIME_ZONE = object_schema({"city": STRING, "timezone": STRING, "pop": INTEGER})
BOOKING_CANCEL = {
    "type": "object",
    "properties": {
        "cancellationReason": STRING,
        "cancelSubsequentBookings": {
            "type": "boolean",
            "description": "Also cancel the later occurrences of its recurring series; the answer is then the series.",
        },
        "seatUid": {"type": "string", "description": "Refused: this service has no seated bookings."},
    },
}

# --- operations -------------------------------------------------------------------------------

# v1's header, with the v2 answers it can give.
IDEMPOTENCY_PARAMETER = {
    "name": IDEMPOTENCY_HEADER,
    "in": "header",
    "required": False,
    "schema": V1_IDEMPOTENCY_PARAMETER.type,
    "description": (
        f"{V1_IDEMPOTENCY_PARAMETER.description} Not a Cal.com header. The replay is the v2 envelope byte for "
        "byte; the same key with another body is a 422, a repeat while the first still runs a 409."
    ),
}


def _idempotent_writes(paths: dict) -> dict:
    """Every v2 write takes an Idempotency-Key (the views share v1's, core.idempotency): the
    header, the Idempotent-Replayed header of a replayed answer, and the 409/422 it can give."""
    for operations in paths.values():
        for method, operation in operations.items():
            if method.upper() not in WRITE_METHODS:
                continue
            operation["parameters"] = [*operation["parameters"], IDEMPOTENCY_PARAMETER]
            operation["responses"] = {**operation["responses"], **error_answers(409, 422)}
            for code, answer in operation["responses"].items():
                if code.startswith("2"):
                    operation["responses"][code] = {**answer, "headers": REPLAYED_HEADERS}
    return paths


PAGE = [
    query_parameter("take", {"type": "integer", "minimum": 1, "maximum": 250}),
    query_parameter("skip", {"type": "integer", "minimum": 0}),
]
STATUSES = {"type": "string", "enum": ["upcoming", "recurring", "past", "cancelled", "unconfirmed"]}
BOOKING_FILTERS = [
    query_parameter("status", STATUSES, "Comma-separated list (2026-05-01: exactly one)."),
    query_parameter("attendeeEmail", {"type": "string"}),
    query_parameter("attendeeName", {"type": "string"}),
    query_parameter("eventTypeId", {"type": "integer"}),
    query_parameter("eventTypeIds", {"type": "string"}, "Comma-separated ids."),
    query_parameter("teamId", {"type": "integer"}),
    query_parameter("teamsIds", {"type": "string"}, "Comma-separated ids."),
    *(
        query_parameter(name, {"type": "string"}, "ISO 8601 date-time or date.")
        for name in (
            "afterStart",
            "beforeEnd",
            "afterCreatedAt",
            "beforeCreatedAt",
            "afterUpdatedAt",
            "beforeUpdatedAt",
        )
    ),
    *(
        query_parameter(name, {"type": "string", "enum": ["asc", "desc"]})
        for name in ("sortStart", "sortEnd", "sortCreated")
    ),
    *PAGE,
    query_parameter("limit", {"type": "integer", "minimum": 1, "maximum": 250}, "2026-05-01 only."),
    query_parameter("cursor", {"type": "string"}, "2026-05-01 only: pagination.nextCursor of the previous page."),
]
WEBHOOK_ID = path_parameter("webhookId", {"type": "string", "format": "uuid"})
SCHEDULE_ID = path_parameter("scheduleId", {"type": "integer"})
ONE_WEBHOOK = response_of(success_schema(schema_ref("Webhook")))
WEBHOOK_LIST = response_of(success_schema({"type": "array", "items": schema_ref("Webhook")}))


def _webhook_operations(prefix: str, parameters: list, tag: str) -> dict:
    errors = (404,) if parameters else ()
    collection = {
        "get": operation_of(
            f"{prefix}List", tag, "List webhooks", {"200": WEBHOOK_LIST}, parameters=[*parameters, *PAGE], errors=errors
        ),
        "post": operation_of(
            f"{prefix}Create",
            tag,
            "Create a webhook",
            {"201": response_of(success_schema(schema_ref("Webhook")), "Created")},
            parameters=parameters,
            body=WEBHOOK_CREATE,
            errors=(409, *errors),
        ),
    }
    item = {
        "get": operation_of(
            f"{prefix}Get",
            tag,
            "Get a webhook",
            {"200": ONE_WEBHOOK},
            parameters=[*parameters, WEBHOOK_ID],
            errors=(404,),
        ),
        "patch": operation_of(
            f"{prefix}Update",
            tag,
            "Update a webhook",
            {"200": ONE_WEBHOOK},
            parameters=[*parameters, WEBHOOK_ID],
            body=WEBHOOK_UPDATE,
            errors=(404, 409),
        ),
        "delete": operation_of(
            f"{prefix}Delete",
            tag,
            "Delete a webhook",
            {"200": ONE_WEBHOOK},
            parameters=[*parameters, WEBHOOK_ID],
            errors=(404,),
        ),
    }
    return collection, item


def build() -> dict:
    user_webhooks, user_webhook = _webhook_operations("webhooks", [], "Webhooks")
    event_type_webhooks, event_type_webhook = _webhook_operations(
        "eventTypeWebhooks", [EVENT_TYPE_ID], "Event Types / Webhooks"
    )
    booking_list = {
        "oneOf": [
            success_schema(
                {"type": "array", "items": schema_ref("Booking_2024_08_13")}, pagination=schema_ref("OffsetPagination")
            ),
            success_schema(
                {"type": "array", "items": schema_ref("Booking_2024_08_13")}, pagination=schema_ref("CursorPagination")
            ),
            success_schema(LEGACY_BOOKINGS),
        ]
    }
    event_types = {
        "oneOf": [
            success_schema({"type": "array", "items": schema_ref("EventType_2024_06_14")}),
            success_schema(schema_ref("EventTypeGroups_2024_04_15")),
        ]
    }
    one_booking = response_of(success_schema(schema_ref("Booking_2024_08_13")))
    one_event_type = response_of(success_schema(schema_ref("EventType_2024_06_14")))
    one_schedule = response_of(success_schema(schema_ref("Schedule_2024_06_11")))
    slot_parameters = [
        query_parameter(
            "eventTypeId", {"type": "integer", "minimum": 1}, "The event type; or eventTypeSlug with username."
        ),
        query_parameter(
            "eventTypeSlug", {"type": "string"}, "With username (or usernames naming one user) or teamSlug."
        ),
        query_parameter("username", {"type": "string"}, "With eventTypeSlug: the owner."),
        query_parameter("usernames", {"type": "string"}, "One username; several (a group booking) is a 400."),
        query_parameter("teamSlug", {"type": "string"}, "With eventTypeSlug: the team."),
        query_parameter("organizationSlug", {"type": "string"}, "Not supported: a value is a 400."),
        query_parameter("start", {"type": "string"}, "ISO 8601 date or date-time.", required=True),
        query_parameter("end", {"type": "string"}, "ISO 8601 date (inclusive) or date-time.", required=True),
        query_parameter("timeZone", {"type": "string"}, "IANA zone of the answer (default UTC)."),
        query_parameter("duration", {"type": "integer"}, "Must be the event type's length."),
        query_parameter("format", {"type": "string", "enum": ["time", "range"]}),
        query_parameter(
            "bookingUidToReschedule", {"type": "string"}, "A booking being moved: its own time counts as free."
        ),
        team_openapi.INCLUDE_HOSTS,
    ]
    paths = {
        "/v2/me": {
            "get": operation_of(
                "meGet", "Me", "The caller's profile", {"200": response_of(success_schema(schema_ref("Me")))}
            ),
            "patch": operation_of(
                "meUpdate",
                "Me",
                "Change the caller's profile",
                {"200": response_of(success_schema(schema_ref("Me")))},
                body=ME_UPDATE,
            ),
        },
        "/v2/teams": {
            "get": operation_of(
                "teamsList",
                "Teams",
                "Teams the caller is a member of",
                {"200": response_of(success_schema({"type": "array", "items": TEAM}))},
            ),
            "post": team_openapi.create_team_operation(
                operation=operation_of, answer=response_of, success=success_schema, team=TEAM
            ),
        },
        **team_openapi.team_paths(
            operation=operation_of, answer=response_of, success=success_schema, path=path_parameter, team=TEAM
        ),
        **team_openapi.team_bookings_path(
            operation=operation_of,
            answer=response_of,
            success=success_schema,
            path=path_parameter,
            ref=schema_ref,
            filters=BOOKING_FILTERS,
        ),
        "/v2/timezones": {
            "get": operation_of(
                "timeZonesList",
                "Timezones",
                "IANA time zones",
                {"200": response_of(success_schema({"type": "array", "items": TIME_ZONE}))},
            )
        },
        "/v2/bookings/{bookingUid}/reschedule": booking_action(
            "bookingsReschedule",
            "Move a booking (a new booking replaces it)",
            {"201": response_of(success_schema(schema_ref("Booking_2024_08_13")), "Created")},
            body=BOOKING_RESCHEDULE,
        ),
        "/v2/bookings/{bookingUid}/confirm": booking_action(
            "bookingsConfirm", "Accept a pending booking", {"200": one_booking}
        ),
        "/v2/bookings/{bookingUid}/decline": booking_action(
            "bookingsDecline", "Reject a pending booking", {"200": one_booking}, body=BOOKING_DECLINE
        ),
        "/v2/bookings/{bookingUid}/mark-absent": booking_action(
            "bookingsMarkAbsent",
            "Mark the host or attendees absent (once the meeting has started)",
            {"200": one_booking},
            body=MARK_ABSENT,
        ),
        "/v2/bookings/{bookingUid}/attendees": booking_action(
            "bookingsAddAttendee",
            "Add an attendee to a booking",
            {"201": response_of(success_schema(schema_ref("BookingAttendee_2024_08_13")), "Created")},
            body=ADD_ATTENDEE,
            tag="Bookings / Attendees",
        ),
        "/v2/webhooks": user_webhooks,
        "/v2/webhooks/{webhookId}": user_webhook,
        "/v2/event-types/{eventTypeId}": {
            "get": operation_of(
                "eventTypesGet",
                "Event Types",
                "One event type",
                {"200": one_event_type},
                parameters=[EVENT_TYPE_ID],
                errors=(404,),
            ),
            "patch": operation_of(
                "eventTypesUpdate",
                "Event Types",
                "Change an event type",
                {"200": one_event_type},
                parameters=[EVENT_TYPE_ID],
                body=EVENT_TYPE_UPDATE,
                errors=(404, 409),
            ),
            "delete": operation_of(
                "eventTypesDelete",
                "Event Types",
                "Delete an event type",
                {"200": response_of(success_schema(DELETED_EVENT_TYPE))},
                parameters=[EVENT_TYPE_ID],
                errors=(404,),
            ),
        },
        "/v2/schedules": {
            "get": operation_of(
                "schedulesList",
                "Schedules",
                "The caller's schedules",
                {"200": response_of(success_schema({"type": "array", "items": schema_ref("Schedule_2024_06_11")}))},
            ),
            "post": operation_of(
                "schedulesCreate",
                "Schedules",
                "Create a schedule",
                {"201": response_of(success_schema(schema_ref("Schedule_2024_06_11")), "Created")},
                body=SCHEDULE_CREATE,
            ),
        },
        "/v2/schedules/default": {
            "get": operation_of(
                "schedulesDefault",
                "Schedules",
                "The caller's default schedule (null if none)",
                {"200": response_of(success_schema({**SCHEDULE, "nullable": True}))},
            )
        },
        "/v2/schedules/{scheduleId}": {
            "get": operation_of(
                "schedulesGet",
                "Schedules",
                "One schedule",
                {"200": one_schedule},
                parameters=[SCHEDULE_ID],
                errors=(404,),
            ),
            "patch": operation_of(
                "schedulesUpdate",
                "Schedules",
                "Change a schedule (availability and overrides replace what was sent)",
                {"200": one_schedule},
                parameters=[SCHEDULE_ID],
                body=SCHEDULE_UPDATE,
                errors=(404,),
            ),
            "delete": operation_of(
                "schedulesDelete",
                "Schedules",
                "Delete a schedule",
                {"200": response_of(object_schema({"status": {"type": "string", "enum": ["success"]}}))},
                parameters=[SCHEDULE_ID],
                errors=(404,),
            ),
        },
        "/v2/event-types": {
            "post": operation_of(
                "eventTypesCreate",
                "Event Types",
                "Create an event type",
                {"201": response_of(success_schema(schema_ref("EventType_2024_06_14")), "Created")},
                body=EVENT_TYPE_CREATE,
                errors=(409,),
            ),
            "get": operation_of(
                "eventTypesList",
                "Event Types",
                "The caller's event types (shape by version)",
                {"200": response_of(event_types)},
                parameters=[
                    query_parameter(
                        "username", {"type": "string"}, "2024-06-14 and later: this user's bookable event types."
                    ),
                    query_parameter("eventSlug", {"type": "string"}, "With username: the one with this slug."),
                ],
            ),
        },
        "/v2/event-types/{eventTypeId}/webhooks": event_type_webhooks,
        "/v2/event-types/{eventTypeId}/webhooks/{webhookId}": event_type_webhook,
        **dict(
            zip(
                (
                    "/v2/teams/{teamId}/event-types/{eventTypeId}/webhooks",
                    "/v2/teams/{teamId}/event-types/{eventTypeId}/webhooks/{webhookId}",
                ),
                _webhook_operations(
                    "teamEventTypeWebhooks",
                    [path_parameter("teamId", {"type": "integer"}), EVENT_TYPE_ID],
                    "Teams / Webhooks",
                ),
                strict=True,
            )
        ),
        "/v2/bookings": {
            "get": operation_of(
                "bookingsList",
                "Bookings",
                "The caller's bookings",
                {"200": response_of(booking_list)},
                parameters=BOOKING_FILTERS,
            ),
            "post": operation_of(
                "bookingsCreate",
                "Bookings",
                "Book a slot",
                {
                    "201": response_of(
                        {
                            "oneOf": [
                                success_schema(schema_ref("Booking_2024_08_13")),
                                success_schema({"type": "array", "items": schema_ref("Booking_2024_08_13")}),
                                success_schema(schema_ref("Booking_2024_04_15")),
                            ]
                        },
                        "Created (a series: its bookings; 2024-04-15: the v1 booking, a series' first)",
                    )
                },
                body={"oneOf": [BOOKING_CREATE, LEGACY_BOOKING_CREATE]},
                errors=(404, 409),
            ),
        },
        "/v2/bookings/{bookingUid}": {
            "get": operation_of(
                "bookingsGet", "Bookings", "One booking", {"200": one_booking}, parameters=[BOOKING_UID], errors=(404,)
            )
        },
        "/v2/bookings/{bookingUid}/cancel": booking_action(
            "bookingsCancel",
            "Cancel a booking (with cancelSubsequentBookings: the rest of its series too)",
            {
                "200": response_of(
                    {
                        "oneOf": [
                            success_schema(schema_ref("Booking_2024_08_13")),
                            success_schema({"type": "array", "items": schema_ref("Booking_2024_08_13")}),
                        ]
                    }
                )
            },
            body=BOOKING_CANCEL,
        ),
        "/v2/slots": {
            "get": operation_of(
                "slotsList",
                "Slots",
                "Free slots by day",
                {"200": response_of(success_schema(schema_ref("Slots")))},
                parameters=slot_parameters,
                errors=(404,),
            )
        },
        "/v2/slots/why-not": {
            "get": operation_of(
                "slotsWhyNot",
                "Slots",
                "Why a start is not bookable, host by host (this service's extension)",
                {"200": response_of(success_schema(team_openapi.WHY_NOT))},
                parameters=team_openapi.why_not_parameters(query_parameter),
                errors=(404,),
            )
        },
        **team_openapi.team_event_type_paths(
            operation=operation_of,
            answer=response_of,
            success=success_schema,
            path=path_parameter,
            ref=schema_ref,
            create=EVENT_TYPE_CREATE,
            update=EVENT_TYPE_UPDATE,
        ),
        **team_openapi.reassign_paths(
            operation=operation_of, answer=response_of, success=success_schema, path=path_parameter
        ),
    }
    paths["/v2/bookings/{bookingUid}/attendees"]["get"] = openapi_extras.attendee_list_operation()
    paths["/v2/event-types/{eventTypeId}/webhooks"]["delete"] = openapi_extras.event_type_webhooks_delete_operation()
    paths.update(openapi_extras.paths())
    return {
        "openapi": "3.0.3",
        "info": {
            "title": f"{settings.SERVICE_NAME} API v2 (Cal.com API v2 compatible)",
            "version": settings.SERVICE_VERSION,
            "description": (
                "The part of Cal.com's API v2 that integrations call, over the same bookings, event types "
                "and webhooks as /v1. Guide: [moving from Cal.com API v2](/docs/migrating-from-cal.md)."
            ),
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": {**_idempotent_writes({**paths, **calendars_openapi.paths()}), **openapi_extras.oauth_paths()},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "An API key or an OAuth access token."}
            },
            "schemas": {
                "Error": ERROR,
                "Me": ME,
                "Webhook": WEBHOOK,
                "Booking_2024_08_13": BOOKING,
                "Booking_2024_04_15": LEGACY_BOOKING,
                "BookingAttendee_2024_08_13": ADDED_ATTENDEE,
                "OffsetPagination": OFFSET_PAGINATION,
                "CursorPagination": CURSOR_PAGINATION,
                "EventType_2024_06_14": EVENT_TYPE,
                "TeamEventType_2024_06_14": team_openapi.team_event_type_schema(EVENT_TYPE),
                "EventType_2024_04_15": LEGACY_EVENT_TYPE,
                "EventTypeGroups_2024_04_15": EVENT_TYPE_GROUPS,
                "Slots": SLOTS,
                "Schedule_2024_06_11": SCHEDULE,
                **calendars_openapi.schemas(),
            },
        },
    }


@functools.cache
def document() -> dict:
    return build()


def openapi_json(request):
    return JsonResponse(document())
