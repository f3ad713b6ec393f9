"""Time taken out of a host's availability without a booking: slot reservations (a booker's
short hold on one slot) and out-of-office entries. Both are busy time for GET /slots and for
every booking (scheduling.selectors.slot_sources reads `holds.selectors.held_time`)."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class SlotReservation(models.Model):
    """Cal.com's reserved slot: the host's time [slot_start, slot_end) held until `reserved_until`."""

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event_type = models.ForeignKey("scheduling.EventType", on_delete=models.CASCADE, related_name="reservations")
    # The event type's host when the slot was reserved: whose time is held.
    host = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Who reserved it (null: an unauthenticated booker), the only one who may change or free it
    # besides the host.
    reserved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    slot_start = models.DateTimeField()
    slot_end = models.DateTimeField()
    reserved_until = models.DateTimeField()
    minutes = models.PositiveIntegerField(help_text="How long the hold lasts from its last write.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slot_start", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(slot_end__gt=F("slot_start")), name="reservation_ends_after_start"),
        ]
        indexes = [models.Index(fields=["host", "reserved_until"], name="reservation_host_until")]

    def __str__(self):
        return f"{self.event_type_id} at {self.slot_start:%Y-%m-%d %H:%M} until {self.reserved_until:%H:%M:%S}"


class OutOfOfficeReason(models.TextChoices):
    UNSPECIFIED = "unspecified"
    VACATION = "vacation"
    TRAVEL = "travel"
    SICK = "sick"
    PUBLIC_HOLIDAY = "public_holiday"


class OutOfOfficeEntry(models.Model):
    """A user away over [start, end); `to_user` is who covers for them (Cal.com's redirect)."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="out_of_office")
    to_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="covering_for"
    )
    start = models.DateTimeField()
    end = models.DateTimeField()
    notes = models.TextField(blank=True, max_length=2000)
    reason = models.CharField(max_length=20, choices=OutOfOfficeReason.choices, default=OutOfOfficeReason.UNSPECIFIED)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["start", "id"]
        verbose_name = "out-of-office entry"
        verbose_name_plural = "out-of-office entries"
        constraints = [
            models.CheckConstraint(condition=Q(end__gt=F("start")), name="ooo_ends_after_start"),
            models.CheckConstraint(condition=~Q(to_user=F("user")), name="ooo_not_redirected_to_self"),
        ]
        indexes = [models.Index(fields=["user", "end"], name="ooo_user_end")]

    def __str__(self):
        return f"{self.user} away {self.start:%Y-%m-%d} to {self.end:%Y-%m-%d}"
