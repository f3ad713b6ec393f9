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


TEAM_HOST_INPUT = {
    "type": "object",
    "properties": {
        "userId": {"type": "integer", "minimum": 1},
        "mandatory": {"type": "boolean", "description": "Round robin: attends every booking (a fixed host)."},
        "priority": {"type": "string", "enum": ["lowest", "low", "medium", "high", "highest"]},
        "weight": {"type": "integer", "minimum": 0},
    },
    "required": ["userId"],
}
TEAM_HOST = {
    "type": "object",
    "properties": {
        "userId": {"type": "integer"},
        "name": {"type": "string"},
        "username": {"type": "string"},
        "avatarUrl": {"type": "string", "nullable": True},
        "mandatory": {"type": "boolean"},
        "priority": {"type": "string", "enum": ["lowest", "low", "medium", "high", "highest"]},
        "weight": {"type": "integer"},
    },
    "required": ["userId", "name", "username", "avatarUrl", "mandatory", "priority", "weight"],
    "additionalProperties": False,
}
TEAM_FIELDS = {
    "teamId": {"type": "integer"},
    "schedulingType": {"type": "string", "enum": ["ROUND_ROBIN", "COLLECTIVE"], "nullable": True},
    "hosts": {"type": "array", "items": TEAM_HOST},
    "assignAllTeamMembers": {"type": "boolean"},
}
HOST_INPUT_FIELDS = {
    "schedulingType": {"type": "string", "enum": ["collective", "roundRobin"]},
    "hosts": {"type": "array", "items": TEAM_HOST_INPUT, "maxItems": 500, "description": "Replaces the list."},
    "assignAllTeamMembers": {"type": "boolean", "description": "Every accepted member, present and future."},
}


def team_event_type_schema(event_type: dict) -> dict:
    """The team event type: the event type's schema with the team fields."""
    return {
        **event_type,
        "properties": {**event_type["properties"], **TEAM_FIELDS},
        "required": list(dict.fromkeys([*event_type.get("required", []), *TEAM_FIELDS])),
    }


def team_event_type_paths(*, operation, answer, success, path, ref, create: dict, update: dict) -> dict:
    """/v2/teams/{teamId}/event-types and …/{eventTypeId}; `operation`, `answer`, `success`,
    `path` and `ref` are the document's own builders, `create`/`update` its event type bodies."""
    team_id = path("teamId", {"type": "integer"})
    event_type_id = path("eventTypeId", {"type": "integer"})
    one = answer(success(ref("TeamEventType_2024_06_14")))
    create_body = {
        **create,
        "properties": {**create["properties"], **HOST_INPUT_FIELDS},
        "required": list(dict.fromkeys([*create.get("required", []), "schedulingType"])),
    }
    update_body = {**update, "properties": {**update["properties"], **HOST_INPUT_FIELDS}}
    deleted = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "lengthInMinutes": {"type": "integer"},
            "title": {"type": "string"},
            "slug": {"type": "string"},
        },
    }
    return {
        "/v2/teams/{teamId}/event-types": {
            "get": operation(
                "teamEventTypesList",
                "Teams",
                "A team's event types with their hosts",
                {"200": answer(success({"type": "array", "items": ref("TeamEventType_2024_06_14")}))},
                parameters=[team_id],
            ),
            "post": operation(
                "teamEventTypesCreate",
                "Teams",
                "Create a team event type (collective or round robin)",
                {"201": one},
                parameters=[team_id],
                body=create_body,
                errors=(409,),
            ),
        },
        "/v2/teams/{teamId}/event-types/{eventTypeId}": {
            "get": operation(
                "teamEventTypesGet",
                "Teams",
                "A team event type",
                {"200": one},
                parameters=[team_id, event_type_id],
                errors=(404,),
            ),
            "patch": operation(
                "teamEventTypesUpdate",
                "Teams",
                "Change a team event type or its hosts",
                {"200": one},
                parameters=[team_id, event_type_id],
                body=update_body,
                errors=(404, 409),
            ),
            "delete": operation(
                "teamEventTypesDelete",
                "Teams",
                "Delete a team event type",
                {"200": answer(success(deleted))},
                parameters=[team_id, event_type_id],
                errors=(404,),
            ),
        },
    }


REASSIGNED = {
    "type": "object",
    "properties": {
        "bookingUid": {"type": "string"},
        "reassignedTo": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "email": {"type": "string"}},
            "required": ["id", "name", "email"],
            "additionalProperties": False,
        },
    },
    "required": ["bookingUid", "reassignedTo"],
    "additionalProperties": False,
}
REASSIGN_BODY = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 5000}}}


def reassign_paths(*, operation, answer, success, path) -> dict:
    """POST /v2/bookings/{bookingUid}/reassign and …/reassign/{userId} (round-robin bookings)."""
    booking_uid = path("bookingUid", {"type": "string"})
    user_id = path("userId", {"type": "integer"})
    ok = {"200": answer(success(REASSIGNED))}
    return {
        "/v2/bookings/{bookingUid}/reassign": {
            "post": operation(
                "bookingsReassign",
                "Bookings",
                "Give a round-robin booking to the next free host",
                ok,
                parameters=[booking_uid],
                body=REASSIGN_BODY,
                errors=(404, 409),
            )
        },
        "/v2/bookings/{bookingUid}/reassign/{userId}": {
            "post": operation(
                "bookingsReassignTo",
                "Bookings",
                "Give a round-robin booking to this host",
                ok,
                parameters=[booking_uid, user_id],
                body=REASSIGN_BODY,
                errors=(404, 409),
            )
        },
    }


TEAM_BODY = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 200},
        "slug": {"type": "string", "maxLength": 200, "description": "Default: made from the name."},
        "bio": {"type": "string"},
        "logoUrl": {"type": "string", "format": "uri"},
        "hideBranding": {"type": "boolean"},
    },
}
ROLE = {"type": "string", "enum": ["MEMBER", "ADMIN", "OWNER"]}
MEMBERSHIP = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "userId": {"type": "integer"},
        "teamId": {"type": "integer"},
        "accepted": {"type": "boolean"},
        "role": ROLE,
        "disableImpersonation": {"type": "boolean"},
        "user": {
            "type": "object",
            "properties": {
                "avatarUrl": {"type": "string", "nullable": True},
                "username": {"type": "string"},
                "name": {"type": "string"},
                "email": {"type": "string"},
            },
            "required": ["avatarUrl", "username", "name", "email"],
            "additionalProperties": False,
        },
    },
    "required": ["id", "userId", "teamId", "accepted", "role", "disableImpersonation", "user"],
    "additionalProperties": False,
}
MEMBERSHIP_UPDATE = {
    "type": "object",
    "properties": {"accepted": {"type": "boolean"}, "role": ROLE, "disableImpersonation": {"type": "boolean"}},
}
MEMBERSHIP_CREATE = {
    "type": "object",
    "properties": {"userId": {"type": "integer", "minimum": 1}, **MEMBERSHIP_UPDATE["properties"]},
    "required": ["userId"],
}


def team_paths(*, operation, answer, success, path, team: dict) -> dict:
    """POST /v2/teams, /v2/teams/{teamId} and its memberships; `team` is the document's team schema."""
    team_id = path("teamId", {"type": "integer"})
    membership_id = path("membershipId", {"type": "integer"})
    one_team = {"200": answer(success(team))}
    one_membership = {"200": answer(success(MEMBERSHIP))}
    return {
        "/v2/teams/{teamId}": {
            "get": operation("teamsGet", "Teams", "A team", one_team, parameters=[team_id], errors=(404,)),
            "patch": operation(
                "teamsUpdate",
                "Teams",
                "Change a team (admins, owners)",
                one_team,
                parameters=[team_id],
                body=TEAM_BODY,
                errors=(404, 409),
            ),
            "delete": operation(
                "teamsDelete", "Teams", "Delete a team (owners)", one_team, parameters=[team_id], errors=(404,)
            ),
        },
        "/v2/teams/{teamId}/memberships": {
            "get": operation(
                "teamMembershipsList",
                "Teams",
                "A team's memberships",
                {"200": answer(success({"type": "array", "items": MEMBERSHIP}))},
                parameters=[team_id],
                errors=(404,),
            ),
            "post": operation(
                "teamMembershipsCreate",
                "Teams",
                "Invite a user (admins, owners)",
                {"201": answer(success(MEMBERSHIP))},
                parameters=[team_id],
                body=MEMBERSHIP_CREATE,
                errors=(404, 409),
            ),
        },
        "/v2/teams/{teamId}/memberships/{membershipId}": {
            "get": operation(
                "teamMembershipsGet",
                "Teams",
                "A membership",
                one_membership,
                parameters=[team_id, membership_id],
                errors=(404,),
            ),
            "patch": operation(
                "teamMembershipsUpdate",
                "Teams",
                "Accept an invitation, change a role",
                one_membership,
                parameters=[team_id, membership_id],
                body=MEMBERSHIP_UPDATE,
                errors=(404, 409),
            ),
            "delete": operation(
                "teamMembershipsDelete",
                "Teams",
                "Leave the team, or remove a member",
                one_membership,
                parameters=[team_id, membership_id],
                errors=(404, 409),
            ),
        },
    }


def create_team_operation(*, operation, answer, success, team: dict) -> dict:
    """POST /v2/teams: the caller becomes the new team's accepted OWNER."""
    return operation(
        "teamsCreate",
        "Teams",
        "Create a team",
        {"201": answer(success(team))},
        body={**TEAM_BODY, "required": ["name"]},
        errors=(409,),
    )


def team_bookings_path(*, operation, answer, success, path, ref, filters: list) -> dict:
    """GET /v2/teams/{teamId}/bookings with /v2/bookings' filters."""
    bookings = success({"type": "array", "items": ref("Booking_2024_08_13")}, pagination=ref("OffsetPagination"))
    return {
        "/v2/teams/{teamId}/bookings": {
            "get": operation(
                "teamBookingsList",
                "Teams",
                "The bookings of a team's event types",
                {"200": answer(bookings)},
                parameters=[path("teamId", {"type": "integer"}), *filters],
                errors=(404,),
            )
        }
    }
