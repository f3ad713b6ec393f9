"""What Cal.com's automation apps receive and list: the booking flattened for Zapier, and the
booking record for the MEETING_* triggers of any app subscription.

Cal.com posts a Zapier subscription's booking triggers as one flat object (`title`, `startTime`,
`user`, `eventType`, `attendees`, `createdAt`, …) instead of its `{triggerEvent, createdAt,
payload}` envelope, and the sample bookings that Make and Zapier list (`listBookings`) have the
same shape. The MEETING_STARTED / MEETING_ENDED triggers of app subscriptions are posted as the
stored booking record with `triggerEvent` in it, without an envelope. Both are built here from
the one webhook payload (scheduling.payloads), so every key means what it means there.
"""

import json

from scheduling.payloads import MEETING_TRIGGERS
from webhooks.app_bodies import register
from webhooks.templating import RenderedBody

MAKE = "make"
ZAPIER = "zapier"
APP_NAMES = {MAKE: "Make", ZAPIER: "Zapier"}


def is_booking_event(payload: dict) -> bool:
    """A booking trigger's calendar event (not a no-show update, an out-of-office entry or a
    MEETING_* record): what Cal.com flattens for Zapier."""
    return "organizer" in payload and "message" not in payload and "oooEntry" not in payload


def flattened_booking(payload: dict, *, status: str | None = None, cancellation_reason=None) -> dict:
    """A booking trigger's payload as Zapier gets it. `status` and `cancellation_reason` replace
    the trigger's (a listed booking shows its own)."""
    organizer = payload["organizer"]
    return {
        "title": payload["title"],
        "description": payload["description"],
        "customInputs": payload["customInputs"],
        "responses": payload["responses"],
        "userFieldsResponses": payload["userFieldsResponses"],
        "startTime": payload["startTime"],
        "endTime": payload["endTime"],
        "location": payload["location"],
        "status": status if status is not None else payload["status"],
        "cancellationReason": cancellation_reason if status is not None else payload.get("cancellationReason"),
        "user": {
            "username": organizer["username"],
            "name": organizer["name"],
            "email": organizer["email"],
            "timeZone": organizer["timeZone"],
            "utcOffset": organizer["utcOffset"],
            "locale": organizer["language"]["locale"],
        },
        "eventType": {
            "title": payload["eventTitle"],
            "description": payload["eventDescription"],
            "requiresConfirmation": payload["requiresConfirmation"],
            "price": payload["price"],
            "currency": payload["currency"],
            "length": payload["length"],
        },
        "attendees": [
            {
                "name": attendee["name"],
                "email": attendee["email"],
                "timeZone": attendee["timeZone"],
                "utcOffset": attendee["utcOffset"],
            }
            for attendee in payload["attendees"]
        ],
    }


def _json(body: dict) -> RenderedBody:
    return RenderedBody(json.dumps(body, ensure_ascii=False).encode(), "application/json")


def make_body(*, trigger_event: str, created_at: str, payload: dict) -> RenderedBody | None:
    if trigger_event in MEETING_TRIGGERS:
        return _json(payload)  # the booking record, `triggerEvent` included
    return None


def zapier_body(*, trigger_event: str, created_at: str, payload: dict) -> RenderedBody | None:
    if trigger_event in MEETING_TRIGGERS:
        return _json(payload)
    if is_booking_event(payload):
        return _json({**flattened_booking(payload), "createdAt": created_at})
    return None


def register_app_bodies() -> None:
    register(MAKE, make_body)
    register(ZAPIER, zapier_body)
