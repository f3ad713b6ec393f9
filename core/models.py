from django.conf import settings
from django.db import models


class App(models.Model):
    """An installed integration (payment provider, webhook app). Its slug is its public id."""

    slug = models.SlugField(primary_key=True, max_length=100)
    name = models.CharField(max_length=200)
    categories = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name


class IdempotencyRecord(models.Model):
    """The stored answer of a write sent with an `Idempotency-Key` (core.idempotency).

    Written in the transaction of the write it answers, so both commit or neither does. The key is
    the caller's: two users may use the same one. `request_hash` covers the query string (without
    `apiKey`) and the canonical JSON of the body; method and path are kept as sent, to say what
    differs when a key is reused."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=2048)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_headers = models.JSONField(default=dict)
    response_body = models.BinaryField()
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_user_key_unique")]
        indexes = [models.Index(fields=["expires_at"], name="idempotency_expires_at")]

    def __str__(self):
        return f"{self.method} {self.path} ({self.key})"
