"""The OpenAPI document describes GET /slots as the object it answers."""

from datetime import timedelta

import pytest
import requests
import schemathesis
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory


def test_document_describes_slots_as_one_object_not_an_array(client):
    document = client.get("/v1/openapi.json").json()
    schema = document["paths"]["/v1/slots"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema.get("type") != "array"
    slots = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    assert slots["required"] == ["slots"]


@pytest.mark.django_db(transaction=True)
def test_real_slots_answer_conforms_to_the_document(live_server):
    document = schemathesis.openapi.from_dict(requests.get(f"{live_server.url}/v1/openapi.json", timeout=10).json())
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=60)
    day = timezone.now().date() + timedelta(days=14)
    response = requests.get(
        f"{live_server.url}/v1/slots",
        params={"eventTypeId": event_type.pk, "startTime": str(day), "endTime": str(day + timedelta(days=6))},
        headers={"Authorization": f"Bearer {ApiKeyFactory(user=organizer).raw_key}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    assert response.json()["slots"]
    document["/v1/slots"]["GET"].validate_response(response)
