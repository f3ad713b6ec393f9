"""Cal.com's private links of an event type: a secret link to its booking page that works until a
date (time-based) or for a number of bookings (usage-based)."""

import secrets

from django.db import models
from django.db.models import Q


def new_link_id() -> str:
    return secrets.token_hex(16)


class PrivateLink(models.Model):
    link_id = models.CharField(max_length=64, unique=True, default=new_link_id, editable=False)
    event_type = models.ForeignKey("scheduling.EventType", on_delete=models.CASCADE, related_name="private_links")
    expires_at = models.DateTimeField(null=True, blank=True)
    max_usage_count = models.PositiveIntegerField(null=True, blank=True)
    usage_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__isnull=True, max_usage_count__gte=1)
                | Q(expires_at__isnull=False, max_usage_count__isnull=True),
                name="private_link_time_or_usage_based",
            )
        ]

    def __str__(self):
        return self.link_id
