"""The OpenAPI document tells the truth about the input limits and the answers they give."""

import pytest
from drf_spectacular.generators import SchemaGenerator

HTTP_METHODS = {"get", "post", "patch", "put", "delete"}


def document() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(paths: dict):
    for path, item in paths.items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield path, method, operation


def test_every_operation_documents_a_400_and_every_body_a_413():
    for path, method, operation in operations(document()["paths"]):
        assert "400" in operation["responses"], (method, path)
        if method in ("post", "patch", "put"):
            assert "413" in operation["responses"], (method, path)


def test_take_and_page_are_documented_with_their_bounds():
    parameters = {
        parameter["name"]: parameter for parameter in document()["paths"]["/v1/schedules"]["get"]["parameters"]
    }

    assert parameters["take"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}
    assert parameters["page"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}


@pytest.mark.parametrize("path", ["/v1/bookings/{id}/cancel", "/v1/bookings/{id}"])
def test_a_delete_with_a_body_is_documented_as_the_200_it_answers(path):
    schema = document()
    responses = schema["paths"][path]["delete"]["responses"]

    assert "204" not in responses
    assert responses["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/BookingCancelled"
    }
    required = schema["components"]["schemas"]["BookingCancelled"]["required"]
    assert {"success", "message", "bookingId", "bookingUid", "booking"} <= set(required)


def test_currencies_are_documented_as_the_iso_4217_list():
    schemas = document()["components"]["schemas"]
    currency = schemas["EventTypeCreateRequest"]["properties"]["currency"]

    assert currency["allOf"] == [{"$ref": "#/components/schemas/CurrencyEnum"}]
    assert "usd" in schemas["CurrencyEnum"]["enum"] and "aaa" not in schemas["CurrencyEnum"]["enum"]


def test_an_event_type_slug_conflict_is_documented():
    paths = document()["paths"]

    assert "409" in paths["/v1/event-types"]["post"]["responses"]
    assert "409" in paths["/v1/event-types/{id}"]["patch"]["responses"]
