"""Every v2 answer a test receives is checked against the v2 OpenAPI document: its status is
documented for the operation and its body matches the schema (calv2/openapi.py)."""

import re

from openapi_schema_validator import OAS30Validator

from calv2.openapi import document


def _operations():
    for template, operations in document()["paths"].items():
        pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")
        yield pattern, operations


def check(method: str, path: str, response) -> None:
    if path == "/v2/openapi.json":
        return
    operation = None
    for pattern, operations in _operations():
        if pattern.match(path) and method.lower() in operations:
            operation = operations[method.lower()]
            break
    if operation is None:
        # Not an operation: the v2 404 (or 405) envelope.
        assert response.status_code in (404, 405), (method, path, response.status_code)
        schema = {"$ref": "#/components/schemas/Error"}
    else:
        documented = operation["responses"]
        assert str(response.status_code) in documented, (method, path, response.status_code, response.content[:300])
        schema = documented[str(response.status_code)]["content"]["application/json"]["schema"]
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    root = document()
    validator = OAS30Validator({**schema, "components": root["components"]})
    errors = sorted(validator.iter_errors(response.json()), key=str)
    assert not errors, (method, path, [error.message for error in errors[:3]])
