"""The v2 document's entries for team scheduling: who is free per slot (`includeHosts` on
GET /v2/slots) and GET /v2/slots/why-not. Both are this service's extensions."""

from scheduling.selectors.why_not import RULES

INCLUDE_HOSTS = {
    "name": "includeHosts",
    "in": "query",
    "required": False,
    "schema": {"type": "boolean"},
    "description": "This service's extension: each slot also lists `hosts`, who is free then (a round-robin "
    "event type's assignable hosts, a collective one's hosts, a personal one's owner).",
}
SLOT_HOST = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "username": {"type": "string"},
        "timeZone": {"type": "string"},
    },
    "required": ["id", "name", "username", "timeZone"],
    "additionalProperties": False,
}
REASON = {
    "type": "object",
    "properties": {"rule": {"type": "string", "enum": list(RULES)}, "detail": {"type": "string"}},
    "required": ["rule", "detail"],
    "additionalProperties": False,
}
WHY_NOT = {
    "type": "object",
    "properties": {
        "eventTypeId": {"type": "integer"},
        "start": {"type": "string", "format": "date-time"},
        "bookable": {"type": "boolean"},
        "schedulingType": {"type": "string", "enum": ["ROUND_ROBIN", "COLLECTIVE"], "nullable": True},
        "reasons": {"type": "array", "items": REASON},
        "hosts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "userId": {"type": "integer"},
                    "isFixed": {"type": "boolean"},
                    "free": {"type": "boolean"},
                    "reasons": {"type": "array", "items": REASON},
                },
                "required": ["userId", "isFixed", "free", "reasons"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["eventTypeId", "start", "bookable", "schedulingType", "reasons", "hosts"],
    "additionalProperties": False,
}


def why_not_parameters(query) -> list:
    return [
        query("eventTypeId", {"type": "integer", "minimum": 1}, required=True),
        query("start", {"type": "string"}, "The start to explain (ISO 8601).", required=True),
        query("timeZone", {"type": "string"}, "The zone of `start` when it has no offset (default UTC)."),
    ]
