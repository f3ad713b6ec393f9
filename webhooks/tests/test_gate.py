"""The per-webhook gate (webhooks.slots): the same rules in Redis (production) and in one process
(`make run` without Redis); and a webhook's `rateLimit` over the API and through a real worker."""

import uuid

import pytest
from django.db import transaction

from tests.support.credentials import bearer
from tests.support.live_services import wait_until
from webhooks.models import DeliveryAttempt, DeliveryStatus, Webhook, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.slots import LocalGate, RedisGate
from webhooks.tests.factories import WebhookFactory


@pytest.fixture(params=["redis", "local"])
def gate(request, settings):
    if request.param == "local":
        return LocalGate()
    import redis

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    return RedisGate(settings.REDIS_URL)


def acquire(gate, webhook_id, delivery_id, cap=2, rate=None, hold_seconds=60):
    return gate.acquire(webhook_id=webhook_id, delivery_id=delivery_id, cap=cap, hold_seconds=hold_seconds, rate=rate)


def test_a_webhook_gets_at_most_its_cap_of_slots_and_the_oldest_waiting_delivery_goes_next(gate):
    webhook_id = uuid.uuid4()
    assert acquire(gate, webhook_id, 1).admitted
    assert acquire(gate, webhook_id, 2).admitted
    assert acquire(gate, webhook_id, 1).admitted  # the same delivery again: still its slot
    assert not acquire(gate, webhook_id, 9).admitted
    assert not acquire(gate, webhook_id, 5).admitted
    assert gate.in_flight(webhook_id) == 2

    assert gate.release(webhook_id=webhook_id, delivery_id=1) == 5
    assert acquire(gate, webhook_id, 5).admitted
    assert gate.release(webhook_id=webhook_id, delivery_id=2) == 9
    assert gate.release(webhook_id=webhook_id, delivery_id=5) is None


def test_one_webhooks_full_slots_do_not_touch_anothers(gate):
    busy, quiet = uuid.uuid4(), uuid.uuid4()
    for delivery_id in range(1, 3):
        assert acquire(gate, busy, delivery_id).admitted
    assert not acquire(gate, busy, 3).admitted
    assert acquire(gate, quiet, 4).admitted


def test_a_slot_held_past_its_lease_is_given_back(gate):
    webhook_id = uuid.uuid4()
    assert acquire(gate, webhook_id, 1, cap=1, hold_seconds=-1).admitted  # a worker that died
    assert acquire(gate, webhook_id, 2, cap=1).admitted


def test_a_rate_limited_webhook_starts_one_attempt_per_interval_and_one_delivery_wakes_the_rest(gate):
    webhook_id = uuid.uuid4()
    assert acquire(gate, webhook_id, 1, cap=10, rate=0.5).admitted
    early = acquire(gate, webhook_id, 2, cap=10, rate=0.5)
    assert not early.admitted and 1.5 < early.retry_in <= 2.0  # it enqueues itself for then
    later = acquire(gate, webhook_id, 3, cap=10, rate=0.5)
    assert not later.admitted and later.retry_in is None  # waits in the queue
    assert gate.release(webhook_id=webhook_id, delivery_id=1) == 3
    woken_early = acquire(gate, webhook_id, 2, cap=10, rate=0.5)
    assert not woken_early.admitted and woken_early.retry_in is not None  # it enqueues itself again


def test_a_commits_deliveries_pass_the_gate_in_one_call_as_one_by_one(gate, settings):
    """`acquire_many` (one round trip to Redis) admits what successive `acquire` calls admit: two
    webhooks' deliveries in their order, the cap of each, and a rate limit's wait."""
    import redis

    busy, other, limited = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    requests = [
        (busy, 1, None),
        (other, 2, None),
        (busy, 3, None),
        (busy, 4, None),
        (limited, 5, 1.0),
        (limited, 6, 1.0),
    ]
    if isinstance(gate, RedisGate):
        commands = redis.Redis.from_url(settings.REDIS_URL).info("commandstats")

    admissions = gate.acquire_many(requests, cap=2, hold_seconds=60)

    assert [admission.admitted for admission in admissions] == [True, True, True, False, True, False]
    assert admissions[3].retry_in is None  # waits for a slot to free
    assert 0 < admissions[5].retry_in <= 1.0  # waits for the rate limit's interval
    if isinstance(gate, RedisGate):  # the scripts ran once per delivery, in one pipeline, unasked
        after = redis.Redis.from_url(settings.REDIS_URL).info("commandstats")

        def calls(stats, name):
            return stats.get(name, {}).get("calls", 0)

        assert calls(after, "cmdstat_evalsha") - calls(commands, "cmdstat_evalsha") == len(requests)
        assert calls(after, "cmdstat_script|exists") == calls(commands, "cmdstat_script|exists")
    assert gate.in_flight(busy) == 2 and gate.in_flight(other) == 1


def test_the_gate_answers_after_redis_forgot_its_scripts(settings):
    """A Redis restarted (or flushed) since the gate loaded its scripts: each delivery of a commit
    passes once, and a reap after it too."""
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    gate = RedisGate(settings.REDIS_URL)
    webhook_id = uuid.uuid4()
    assert gate.acquire(webhook_id=webhook_id, delivery_id=1, cap=2, hold_seconds=60, rate=None).admitted
    client.script_flush()
    admissions = gate.acquire_many([(webhook_id, 2, None), (webhook_id, 3, None)], cap=2, hold_seconds=60)
    assert [admission.admitted for admission in admissions] == [True, False]
    assert gate.in_flight(webhook_id) == 2
    client.script_flush()
    assert gate.reap_many([webhook_id], cap=2) == []


def test_enqueue_waiting_hands_back_the_oldest(gate):
    webhook_id = uuid.uuid4()
    assert gate.enqueue_waiting(webhook_id=webhook_id, delivery_ids=[7, 3, 5]) == 3
    assert acquire(gate, webhook_id, 3, cap=1).admitted
    assert gate.release(webhook_id=webhook_id, delivery_id=3) == 5


# --- rateLimit over the API ----------------------------------------------------------------------


@pytest.mark.django_db
def test_rate_limit_is_set_shown_and_removed_over_the_api(api_client):
    from accounts.tests.factories import ApiKeyFactory

    webhook = WebhookFactory()
    auth = bearer(ApiKeyFactory(user=webhook.user).raw_key)

    response = api_client.patch(f"/v1/webhooks/{webhook.pk}", {"rateLimit": 2.5}, format="json", **auth)
    assert response.status_code == 200
    assert response.json()["webhook"]["rateLimit"] == 2.5
    assert response.json()["webhook"]["circuitOpenUntil"] is None
    assert Webhook.objects.get(pk=webhook.pk).rate_limit == 2.5

    response = api_client.patch(f"/v1/webhooks/{webhook.pk}", {"rateLimit": None}, format="json", **auth)
    assert response.status_code == 200
    assert response.json()["webhook"]["rateLimit"] is None

    created = api_client.post(
        "/v1/webhooks",
        {"subscriberUrl": "http://127.0.0.1:9/other", "eventTriggers": ["BOOKING_CREATED"], "rateLimit": 10},
        format="json",
        **auth,
    )
    assert created.status_code == 200
    assert created.json()["webhook"]["rateLimit"] == 10


@pytest.mark.django_db
@pytest.mark.parametrize("value", [0, -1, 0.001, 1001, "5", True, [], {}], ids=repr)
def test_a_bad_rate_limit_is_a_400_naming_it_and_changes_nothing(api_client, value):
    from accounts.tests.factories import ApiKeyFactory

    webhook = WebhookFactory(rate_limit=3)
    auth = bearer(ApiKeyFactory(user=webhook.user).raw_key)

    response = api_client.patch(f"/v1/webhooks/{webhook.pk}", {"rateLimit": value}, format="json", **auth)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "validation_error"
    assert "rateLimit" in response.json()["errors"]
    assert Webhook.objects.get(pk=webhook.pk).rate_limit == 3
    created = api_client.post(
        "/v1/webhooks",
        {"subscriberUrl": "http://127.0.0.1:9/new", "eventTriggers": ["BOOKING_CREATED"], "rateLimit": value},
        format="json",
        **auth,
    )
    assert created.status_code == 400
    assert "rateLimit" in created.json()["errors"]
    assert Webhook.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_rate_limited_webhook_is_never_sent_two_attempts_closer_than_its_interval(start_worker, receiver):
    start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url(), rate_limit=1)
    with transaction.atomic():
        deliveries = [
            emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": n}, user=webhook.user)[0] for n in range(4)
        ]

    requests = receiver.wait_for(4, timeout=40)
    wait_until(
        lambda: WebhookDelivery.objects.filter(webhook=webhook, status=DeliveryStatus.SUCCEEDED).count() == 4,
        40,
        "every delivery to succeed",
    )
    starts = sorted(DeliveryAttempt.objects.filter(delivery__webhook=webhook).values_list("attempted_at", flat=True))
    # One per second: attempts start at least 1 s apart, less a margin for the work between the
    # gate's admission and the logged start on a loaded machine.
    assert all((later - earlier).total_seconds() >= 0.5 for earlier, later in zip(starts, starts[1:], strict=False))
    assert {request.headers["webhook-id"] for request in requests} == {d.message_id for d in deliveries}
