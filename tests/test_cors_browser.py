"""A page on another origin calls the API from headless Chromium, as browser apps called Cal.com's
API v1 (which answered `Access-Control-Allow-Origin: *`): with an API key in the Authorization
header it reads and writes; with cookie credentials, or against the admin, the browser refuses."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import EventType
from tests.support.browser import headless_chromium

pytestmark = pytest.mark.django_db(transaction=True)

CALLS = """
const [api, key, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const auth = {Authorization: "Bearer " + key};
const outcome = async (promise) => {
  try { const response = await promise; return {status: response.status, headers: response.headers}; }
  catch (error) { return {refused: String(error)}; }
};
(async () => {
  const results = {};
  const me = await fetch(api + "/v1/me", {headers: auth});
  results.me = {status: me.status, body: await me.json(), requestId: me.headers.get("X-Request-Id"),
                rateLimit: me.headers.get("RateLimit-Remaining")};
  const created = await fetch(api + "/v1/event-types", {method: "POST",
    headers: {...auth, "Content-Type": "application/json"},
    body: JSON.stringify({title: "From a browser", slug: "from-a-browser", length: 30})});
  results.created = {status: created.status, location: created.headers.get("Location")};
  const cancelled = await outcome(fetch(api + "/v1/bookings/999999", {method: "DELETE", headers: auth}));
  results.deleteStatus = cancelled.status;
  results.withCookies = await outcome(fetch(api + "/v1/me", {headers: auth, credentials: "include"}));
  results.admin = await outcome(fetch(api + "/admin/login/"));
  delete results.withCookies.headers; delete results.admin.headers;
  done(JSON.stringify(results));
})();
"""


class Page(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>another origin</title><p>an app</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def other_origin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_page_on_another_origin_calls_the_api_with_a_key_but_never_with_cookies(live_server, other_origin):
    user = UserFactory()
    raw_key = ApiKeyFactory(user=user).raw_key
    assert not live_server.url.startswith(other_origin)
    with headless_chromium() as browser:
        browser.set_script_timeout(30)
        browser.get(other_origin + "/app")
        results = json.loads(browser.execute_async_script(CALLS, live_server.url, raw_key))
    assert results["me"]["status"] == 200
    assert results["me"]["body"]["user"]["id"] == user.pk
    assert results["me"]["requestId"] and results["me"]["rateLimit"] is not None
    assert results["created"]["status"] == 200
    assert results["created"]["location"].endswith("/v1/event-types/" + str(EventType.objects.get().pk))
    assert EventType.objects.get().owner_id == user.pk
    assert results["deleteStatus"] == 404  # a DELETE's preflight passed; the booking does not exist
    assert "refused" in results["withCookies"]
    assert "refused" in results["admin"]
