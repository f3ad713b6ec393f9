"""Test settings: real PostgreSQL and Redis (from DATABASE_URL / REDIS_URL, defaulting to the
local servers), fast password hashing, loopback allowed as a webhook target."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/scheduling")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production")

from config.settings import *  # noqa: E402,F403
from config.settings import CALENDARS, OUTBOUND, WEBHOOKS  # noqa: E402

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", "core.hashers.SecretSHA256Hasher"]
WEBHOOKS = {**WEBHOOKS, "ALLOWED_CIDRS": ["127.0.0.0/8", "::1/128"], "ALLOW_HTTP": True}
OUTBOUND = {**OUTBOUND, "ALLOWED_CIDRS": ["127.0.0.0/8", "::1/128"], "ALLOW_HTTP": True}
# A fixed key for the suite only (Fernet.generate_key()), never a deployment's.
CALENDARS = {**CALENDARS, "ENCRYPTION_KEYS": ["n6hC0x1Yy1bF8m0fQz2x4mH3Vq4y5xqYQm3b9hV5b1A="]}
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
