"""One accessor for the app's knobs (`settings.CALENDARS`), read at call time so that tests can
override them with the `settings` fixture."""

from django.conf import settings

DEFAULTS = {
    "ENCRYPTION_KEYS": [],
    "REFRESH_INTERVAL_SECONDS": 30,
    # A connection not read successfully for this long is shown unhealthy even before an error.
    "STALE_AFTER_SECONDS": 120,
    "TIMEOUT_SECONDS": 10.0,
    # A read asked for by a person waiting (GET /v2/calendars/{calendar}/check) gives up sooner.
    "ON_DEMAND_TIMEOUT_SECONDS": 3.0,
    # How far busy time is read and cached: slots may be asked for months ahead.
    "WINDOW_PAST_DAYS": 1,
    "WINDOW_FUTURE_DAYS": 400,
    # Bounds on what a calendar server or feed may hand back (hostile ICS).
    "MAX_RESPONSE_BYTES": 5 * 1024 * 1024,
    "MAX_INSTANCES": 20000,
    # Expanding one calendar's events may take this long (a worker is never held longer).
    "EXPAND_SECONDS": 10.0,
    # The outbox of event writes: retry delays, then the write waits for the next sweep.
    "WRITE_RETRY_SECONDS": [5, 30, 120, 600, 1800],
    # A user's bookings as a feed (calendars.feeds): the window of start times it shows, how long a
    # cancelled booking stays in it (as STATUS:CANCELLED), and at most how many events it holds.
    "FEED_PAST_DAYS": 90,
    "FEED_FUTURE_DAYS": 365,
    "FEED_CANCELLED_DAYS": 30,
    "FEED_MAX_UPCOMING": 1000,
    "FEED_MAX_PAST": 250,
    # Google Calendar and Microsoft 365 (calendars.oauth): the OAuth app's client and the
    # provider's published endpoints. The endpoints are settings so that tests can point them at
    # a local server; they are never taken from a request.
    "GOOGLE": {
        "CLIENT_ID": "",
        "CLIENT_SECRET": "",
        "AUTHORIZE_URL": "https://accounts.google.com/o/oauth2/v2/auth",
        "TOKEN_URL": "https://oauth2.googleapis.com/token",
        "API_URL": "https://www.googleapis.com/calendar/v3",
    },
    "MICROSOFT": {
        "CLIENT_ID": "",
        "CLIENT_SECRET": "",
        "TENANT": "common",
        "LOGIN_URL": "https://login.microsoftonline.com",
        "API_URL": "https://graph.microsoft.com/v1.0",
    },
    # The callback's address registered with both providers (…/v2/calendars/{calendar}/save is
    # appended); empty: the address the connect request came to.
    "OAUTH_REDIRECT_BASE_URL": "",
    # Hosts the callback may redirect a browser to (`redir`), besides this service's own and the
    # calling OAuth client's redirect URIs' hosts.
    "OAUTH_REDIR_HOSTS": [],
    # How long a connect's authorization URL (its signed state) may be used.
    "OAUTH_STATE_MAX_AGE_SECONDS": 600,
}


def calendar_setting(name: str):
    return {**DEFAULTS, **getattr(settings, "CALENDARS", {})}[name]


def provider_setting(provider: str) -> dict:
    """One OAuth provider's knobs ("GOOGLE", "MICROSOFT"), the configured ones over the defaults."""
    return {**DEFAULTS[provider], **calendar_setting(provider)}
