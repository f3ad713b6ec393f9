"""What the failover drills share: free booking slots, a steady stream of bookings in a thread
(every answer kept with its time), and the webhook receiver."""

import threading
import time as clock
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import requests

BERLIN = ZoneInfo("Europe/Berlin")
TIMEOUT = 10.0


def free_slots(weeks_ahead: int = 3):
    """Half-hour starts, 9:00 to 16:30 Berlin on weekdays from `weeks_ahead` weeks on, endlessly."""
    today = datetime.now(BERLIN).date()
    day = today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks_ahead)
    while True:
        if day.weekday() < 5:
            for half_hours in range(16):
                yield datetime.combine(day, time(9), tzinfo=BERLIN) + timedelta(minutes=30 * half_hours)
        day += timedelta(days=1)


class SteadyBookings:
    """`POST /v1/bookings` every `pause` seconds until stopped; `answers` holds (time, status, uid),
    status 0 for a request that got no answer at all."""

    def __init__(self, url: str, api_key: str, event_type_id: int, *, pause: float, weeks_ahead: int = 3):
        self.url, self.event_type_id, self.pause = url, event_type_id, pause
        self.headers = {"Authorization": f"Bearer {api_key}"}
        self.slots = free_slots(weeks_ahead)
        self.answers: list[tuple[float, int, str | None]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        session = requests.Session()
        while not self.stopping.is_set():
            body = {"eventTypeId": self.event_type_id, "start": next(self.slots).isoformat(), "name": "Ada"}
            body |= {"email": "ada@example.org", "timeZone": "UTC"}
            try:
                response = session.post(f"{self.url}/v1/bookings", json=body, headers=self.headers, timeout=TIMEOUT)
            except requests.RequestException:
                self.answers.append((clock.monotonic(), 0, None))
                continue
            uid = response.json().get("uid") if response.status_code == 200 else None
            self.answers.append((clock.monotonic(), response.status_code, uid))
            clock.sleep(self.pause)

    def start(self) -> "SteadyBookings":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(TIMEOUT + 5)

    def acknowledged(self, since: float = 0.0) -> set[str]:
        return {uid for at, status, uid in self.answers if status == 200 and at > since}


def receiving():
    """A fixture body: the webhook tests' receiver, a real HTTP server on 127.0.0.1."""
    from tests.support.live_services import Receiver

    server = Receiver()
    yield server
    server.close()


def one_delivery_per_booking(receiver) -> dict[str, set[str]]:
    """booking uid -> the `webhook-id`s its webhooks arrived with (one id: one delivery)."""
    found: dict[str, set[str]] = {}
    for request in receiver.requests:
        found.setdefault(request.json()["payload"]["uid"], set()).add(request.headers["webhook-id"])
    return found
