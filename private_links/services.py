from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.exceptions import NotFound
from private_links.models import PrivateLink
from scheduling.models import EventType
from scheduling.selectors.event_types import event_type_list
from scheduling.services.event_types import event_type_check_can_manage


def managed_event_type(*, actor: User, event_type_id: int) -> EventType:
    """An event type the caller sees (else 404) and may change (else 403)."""
    event_type = event_type_list(user=actor).filter(pk=event_type_id).first()
    if event_type is None:
        raise NotFound(f"Event type with id={event_type_id} not found.")
    event_type_check_can_manage(actor=actor, event_type=event_type)
    return event_type


def _kind(expires_at: datetime | None, max_usage_count: int | None) -> tuple[datetime | None, int | None]:
    """Cal.com's rule: with `expiresAt` a link is time-based; otherwise usage-based, once by default."""
    if expires_at is not None:
        return expires_at, None
    return None, max_usage_count or 1


@transaction.atomic
def private_link_create(
    *, actor: User, event_type_id: int, expires_at: datetime | None = None, max_usage_count: int | None = None
) -> PrivateLink:
    event_type = managed_event_type(actor=actor, event_type_id=event_type_id)
    expires_at, max_usage_count = _kind(expires_at, max_usage_count)
    link = PrivateLink(event_type=event_type, expires_at=expires_at, max_usage_count=max_usage_count)
    link.full_clean(exclude=["event_type"])
    link.save()
    return link


@transaction.atomic
def private_link_update(
    *, link: PrivateLink, expires_at: datetime | None = None, max_usage_count: int | None = None
) -> PrivateLink:
    """A time-based link takes a new `expiresAt`, a usage-based one a new `maxUsageCount` (not
    below its uses so far); a change of kind is refused (400), as in Cal.com."""
    link = PrivateLink.objects.select_for_update().get(pk=link.pk)
    if expires_at is not None:
        if link.expires_at is None:
            raise ValidationError({"expiresAt": ["This link is usage-based: send maxUsageCount."]})
        link.expires_at = expires_at
    if max_usage_count is not None:
        if link.expires_at is not None:
            raise ValidationError({"maxUsageCount": ["This link is time-based: send expiresAt."]})
        if max_usage_count < link.usage_count:
            raise ValidationError({"maxUsageCount": [f"The link was already used {link.usage_count} times."]})
        link.max_usage_count = max_usage_count
    link.full_clean(exclude=["event_type"])
    link.save()
    return link


@transaction.atomic
def private_link_delete(*, link: PrivateLink) -> None:
    link.delete()


@transaction.atomic
def private_link_use(*, link_id: str) -> int:
    """One booking through the link `link_id` (Cal.com v1's `hashedLink`): the id of the event type
    it opens, the link locked and, when usage-based, one use counted, in the booking's transaction
    (a booking refused counts none). Unknown, expired or used up: a 400 on `hashedLink`."""
    link = PrivateLink.objects.select_for_update().filter(link_id=link_id).first()
    if link is None:
        raise ValidationError({"hashedLink": ["No private link has this id."]})
    if link.expires_at is not None:
        if link.expires_at <= timezone.now():
            raise ValidationError({"hashedLink": ["This private link has expired."]})
        return link.event_type_id
    if link.usage_count >= link.max_usage_count:
        raise ValidationError({"hashedLink": ["This private link has been used up."]})
    link.usage_count += 1
    link.save(update_fields=["usage_count"])
    return link.event_type_id
