"""The pieces the v2 OpenAPI document is written with, shared by calv2.openapi and the parts it
merges in (calv2.calendars_openapi, calv2.openapi_extras): a schema reference, an object's schema,
the common scalar schemas, the success envelope, parameters, error answers and an operation with
the `cal-api-version` header and the errors every v2 operation can give."""

from calv2.versions import KNOWN
from calv2.wire import EXCEPTIONS


def schema_ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def object_schema(properties: dict, required: list[str] | None = None, *, extra: bool = False) -> dict:
    schema = {"type": "object", "properties": properties, "additionalProperties": extra}
    schema["required"] = list(properties) if required is None else required
    if not schema["required"]:
        del schema["required"]
    return schema


STRING = {"type": "string"}
NULLABLE_STRING = {"type": "string", "nullable": True}
INTEGER = {"type": "integer"}
NULLABLE_INTEGER = {"type": "integer", "nullable": True}
BOOLEAN = {"type": "boolean"}
DATE_TIME = {"type": "string", "format": "date-time"}
FREE_OBJECT = {"type": "object", "additionalProperties": True}


def success_schema(data_schema: dict, *, pagination: dict | None = None) -> dict:
    properties = {"status": {"type": "string", "enum": ["success"]}, "data": data_schema}
    if pagination is not None:
        properties["pagination"] = pagination
    return object_schema(properties)


VERSION_PARAMETER = {
    "name": "cal-api-version",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "example": KNOWN[-1]},
    "description": (
        "Any value is accepted; an absent or unknown one is 2024-04-15 (docs/migrating-from-cal.md, Versions)."
    ),
}


def query_parameter(name: str, schema: dict, description: str = "", *, required: bool = False) -> dict:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


def path_parameter(name: str, schema: dict) -> dict:
    return {"name": name, "in": "path", "required": True, "schema": schema}


BOOKING_UID = path_parameter("bookingUid", {"type": "string"})
EVENT_TYPE_ID = path_parameter("eventTypeId", {"type": "integer"})


def error_answers(*statuses: int) -> dict:
    error = {"description": "Error", "content": {"application/json": {"schema": schema_ref("Error")}}}
    return {
        str(code): {**error, "description": EXCEPTIONS[code][1]}
        for code in sorted({400, 401, 413, 414, 415, 429, 500, 503, *statuses})
    }


def response_of(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def operation_of(operation_id: str, tag: str, summary: str, responses: dict, *, parameters=(), body=None, errors=()):
    operation = {
        "operationId": operation_id,
        "tags": [tag],
        "summary": summary,
        "parameters": [VERSION_PARAMETER, *parameters],
        "responses": {**responses, **error_answers(403, *errors)},
    }
    if body is not None:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return operation


def booking_action(operation_id: str, summary: str, responses: dict, *, body=None, tag="Bookings") -> dict:
    """POST /v2/bookings/{bookingUid}/<action>: on a booking the caller sees (else 404), refused
    with a 409 when the booking's state does not allow it."""
    operation = operation_of(
        operation_id, tag, summary, responses, parameters=[BOOKING_UID], body=body, errors=(404, 409)
    )
    return {"post": operation}
