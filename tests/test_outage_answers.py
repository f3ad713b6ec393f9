"""Errors that Django answers before (or instead of) a view are problem+json too: a bad Host, a
body over the upload limit read by a middleware, a method a plain Django page does not take."""

import pytest
from django.test import Client

from accounts.tests.factories import UserFactory
from tests.support.problems import assert_problem

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/v1/me", "/v1/schedules", "/auth/login", "/no-such-page"])
def test_a_host_the_service_does_not_answer_for_is_a_problem_400(path):
    response = Client(HTTP_HOST="attacker.example").get(path)

    body = assert_problem(response, 400, "malformed_request")
    assert "Host" in body["detail"]


def test_a_form_body_over_the_upload_limit_is_a_problem_413_and_signs_no_one_in(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    user = UserFactory()
    client = Client()

    response = client.post("/auth/login", {"username": user.username, "password": "x" * 2_000})

    assert_problem(response, 413, "payload_too_large")
    assert "_auth_user_id" not in client.session


def test_a_method_a_django_page_does_not_take_is_a_problem_405_with_allow():
    response = Client().get("/auth/logout")

    body = assert_problem(response, 405, "method_not_allowed")
    assert body["detail"] == 'Method "GET" not allowed.'
    assert "POST" in response["Allow"]


def test_a_bodiless_403_from_django_is_a_problem_403():
    staff = UserFactory(is_staff=True)  # staff, but without the permission to see payments
    client = Client()
    client.force_login(staff)

    response = client.get("/admin/payments/payment/")

    assert_problem(response, 403, "permission_denied")


def test_pages_with_a_body_of_their_own_keep_it():
    response = Client().get("/auth/login")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
