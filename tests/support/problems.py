"""Helpers for tests of bad input: send a JSON body, read the 400's field errors."""

import json


def send(client, method, path, body, headers):
    return getattr(client, method)(path, json.dumps(body), content_type="application/json", **headers)


def errors_of(response) -> dict:
    """The `errors` of a 400 validation_error problem (asserting that it is one)."""
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "validation_error"
    return response.json()["errors"]


def assert_problem(response, status: int, code: str) -> dict:
    """The answer is the contract's problem+json with this status and code; returns its body."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["status"], body["code"]) == (status, code)
    assert body["detail"] == body["message"]
    assert body["requestId"] == response["X-Request-Id"]
    return body
