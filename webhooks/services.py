"""Every write to webhooks and their deliveries: the API, the admin and the tasks all come here."""

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Membership, Team
from accounts.selectors import managed_team_ids
from core.datetimes import iso_utc
from core.exceptions import Conflict, Forbidden
from webhooks.conf import webhook_setting
from webhooks.delivery import attempt_delivery, resume_deliveries
from webhooks.dispatch import enqueue_deliveries
from webhooks.models import (
    PING_TRIGGER,
    DeliveryAttempt,
    DeliveryStatus,
    Webhook,
    WebhookDelivery,
    WebhookTrigger,
)
from webhooks.outbox import webhook_deactivate
from webhooks.samples import sample_payload
from webhooks.scheduled import schedule_meeting_triggers_for_webhook
from webhooks.signing import SECRET_PREFIX, generate_secret, new_message_id, standard_webhooks_key
from webhooks.sources import bookings
from webhooks.ssrf import TargetRefused, resolve_target
from webhooks.templating import validate_template

# --- validation -------------------------------------------------------------------------------


def validate_subscriber_url(url: str) -> None:
    """The SSRF rule (docs/webhooks.md, "Which URLs are accepted"): a 400 on `subscriberUrl` naming the reason."""
    try:
        resolve_target(url)
    except TargetRefused as error:
        raise ValidationError({"subscriberUrl": [str(error)]}) from None


def clean_event_triggers(triggers: list[str]) -> list[str]:
    unknown = [trigger for trigger in triggers if trigger not in WebhookTrigger.values]
    if unknown:
        raise ValidationError(
            {
                "eventTriggers": [
                    f"Unknown trigger(s): {', '.join(map(str, unknown))}. Valid: {', '.join(WebhookTrigger.values)}."
                ]
            }
        )
    cleaned = list(dict.fromkeys(triggers))
    if not cleaned:
        raise ValidationError({"eventTriggers": ["At least one trigger is required."]})
    return cleaned


def validate_secret(secret: str) -> None:
    if secret.startswith(SECRET_PREFIX) and standard_webhooks_key(secret) == secret.encode():
        raise ValidationError({"secret": ["A secret starting with 'whsec_' must continue with base64."]})


def _is_team_admin(user, team_id: int) -> bool:
    return managed_team_ids(user=user).filter(team_id=team_id).exists()


def _resolve_owner(*, actor, user_id, team_id, event_type_id, platform_oauth_client_id) -> dict:
    """Who owns a new webhook (docs/webhooks.md, Creating): the caller by default; an event type
    the caller owns or administers; a team the caller administers; another user or an OAuth client
    (admins only)."""
    from oauth2_provider.models import Application

    is_admin = actor.is_system_admin
    if event_type_id is not None and team_id is not None:
        raise ValidationError({"eventTypeId": ["Give at most one of eventTypeId and teamId."]})
    if user_id is not None and not is_admin and user_id != actor.pk:
        raise Forbidden("Only system administrators may create webhooks for another user.")
    if platform_oauth_client_id is not None and not is_admin:
        raise Forbidden("Only system administrators may create platform webhooks.")
    owner = {"user": None, "team": None, "event_type": None, "platform_oauth_client": None}
    if platform_oauth_client_id is not None:
        client = Application.objects.filter(pk=platform_oauth_client_id).first()
        if client is None:
            raise ValidationError(
                {"platformOAuthClientId": [f"OAuth client {platform_oauth_client_id} does not exist."]}
            )
        owner["platform_oauth_client"] = client
    if event_type_id is not None:
        event_type = bookings().event_type(event_type_id)
        visible = event_type is not None and (
            is_admin
            or event_type.owner_id == actor.pk
            or (
                event_type.team_id is not None
                and Membership.objects.filter(user=actor, team_id=event_type.team_id, accepted=True).exists()
            )
        )
        if not visible:
            raise ValidationError({"eventTypeId": [f"Event type {event_type_id} does not exist."]})
        if not is_admin and event_type.owner_id != actor.pk and not _is_team_admin(actor, event_type.team_id):
            raise Forbidden("Only the team's admins and owners may add webhooks to its event types.")
        owner["event_type"] = event_type
    elif team_id is not None:
        team = Team.objects.filter(pk=team_id).first()
        member = team is not None and Membership.objects.filter(user=actor, team=team, accepted=True).exists()
        if team is None or not (is_admin or member):
            raise ValidationError({"teamId": [f"Team {team_id} does not exist."]})
        if not is_admin and not _is_team_admin(actor, team_id):
            raise Forbidden("Only the team's admins and owners may add team webhooks.")
        owner["team"] = team
    elif user_id is not None:
        from accounts.models import User

        user = User.objects.filter(pk=user_id).first()
        if user is None:
            raise ValidationError({"userId": [f"User {user_id} does not exist."]})
        owner["user"] = user
    elif platform_oauth_client_id is None:
        owner["user"] = actor
    return owner


def validate_rate_limit(rate_limit: float | None) -> None:
    """Events per second: positive and finite, or None (no limit)."""
    if rate_limit is not None and not 0 < rate_limit < float("inf"):
        raise ValidationError({"rateLimit": ["Must be a positive number of events per second, or null."]})


def _save(webhook: Webhook) -> Webhook:
    webhook.full_clean(exclude=["subscriber_url", "event_triggers"], validate_unique=False, validate_constraints=False)
    try:
        with transaction.atomic():
            webhook.save()
    except IntegrityError:
        raise Conflict("A webhook with this subscriberUrl already exists for this owner.") from None
    return webhook


def _duplicate_exists(webhook: Webhook) -> bool:
    same_url = Webhook.objects.filter(subscriber_url=webhook.subscriber_url).exclude(pk=webhook.pk)
    if webhook.event_type_id is not None:
        return same_url.filter(event_type_id=webhook.event_type_id).exists()
    if webhook.team_id is not None:
        return same_url.filter(team_id=webhook.team_id).exists()
    if webhook.user_id is not None:
        return same_url.filter(user_id=webhook.user_id, team__isnull=True, event_type__isnull=True).exists()
    if webhook.platform_oauth_client_id is not None:
        return same_url.filter(platform_oauth_client_id=webhook.platform_oauth_client_id).exists()
    return False


# --- webhooks ---------------------------------------------------------------------------------


@transaction.atomic
def webhook_create(
    *,
    actor,
    subscriber_url: str,
    event_triggers: list[str],
    payload_template: str | None = None,
    active: bool = True,
    secret: str | None = None,
    rate_limit: float | None = None,
    user_id: int | None = None,
    team_id: int | None = None,
    event_type_id: int | None = None,
    platform_oauth_client_id: int | None = None,
    app_id: str | None = None,
) -> Webhook:
    """Create a subscription. Without a client secret one is generated, so every delivery is signed."""
    owner = _resolve_owner(
        actor=actor,
        user_id=user_id,
        team_id=team_id,
        event_type_id=event_type_id,
        platform_oauth_client_id=platform_oauth_client_id,
    )
    triggers = clean_event_triggers(event_triggers)
    validate_subscriber_url(subscriber_url)
    validate_rate_limit(rate_limit)
    validate_template(payload_template or "", trigger_events=triggers)
    if secret:
        validate_secret(secret)
    if app_id is not None:
        from core.models import App

        if not App.objects.filter(pk=app_id).exists():
            raise ValidationError({"appId": [f"App '{app_id}' does not exist."]})
    webhook = Webhook(
        **owner,
        subscriber_url=subscriber_url,
        event_triggers=triggers,
        payload_template=payload_template or "",
        active=active,
        secret=secret or generate_secret(),
        rate_limit=rate_limit,
        app_id=app_id,
        platform=owner["platform_oauth_client"] is not None,
    )
    if _duplicate_exists(webhook):
        raise Conflict("A webhook with this subscriberUrl already exists for this owner.")
    _save(webhook)
    schedule_meeting_triggers_for_webhook(webhook=webhook)
    return webhook


UNSET = object()


@transaction.atomic
def webhook_update(
    *,
    webhook: Webhook,
    subscriber_url=UNSET,
    event_triggers=UNSET,
    payload_template=UNSET,
    active=UNSET,
    secret=UNSET,
    rate_limit=UNSET,
) -> Webhook:
    """PATCH: only the given fields change. `secret=None` (or "") removes the secret."""
    webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
    if event_triggers is not UNSET:
        webhook.event_triggers = clean_event_triggers(event_triggers)
    if subscriber_url is not UNSET and subscriber_url != webhook.subscriber_url:
        validate_subscriber_url(subscriber_url)
        webhook.subscriber_url = subscriber_url
        if _duplicate_exists(webhook):
            raise Conflict("A webhook with this subscriberUrl already exists for this owner.")
    if payload_template is not UNSET:
        webhook.payload_template = payload_template or ""
    if payload_template is not UNSET or event_triggers is not UNSET:
        validate_template(webhook.payload_template, trigger_events=webhook.event_triggers)
    if secret is not UNSET:
        if secret:
            validate_secret(secret)
        webhook.secret = secret or ""
        webhook.previous_secret, webhook.previous_secret_expires_at = "", None
    if rate_limit is not UNSET:
        validate_rate_limit(rate_limit)
        webhook.rate_limit = rate_limit
    deactivate = active is False and webhook.active
    reactivate = active is True and not webhook.active
    if reactivate:
        webhook.active, webhook.disabled_reason, webhook.failing_since = True, "", None
        webhook.consecutive_failures, webhook.circuit_open_until = 0, None
    _save(webhook)
    if reactivate:
        resume_deliveries(webhook=webhook)
    if deactivate:
        webhook_deactivate(webhook=webhook, reason="Deactivated by its owner.")
    schedule_meeting_triggers_for_webhook(webhook=webhook)
    return webhook


@transaction.atomic
def webhook_delete(*, webhook: Webhook) -> None:
    webhook.delete()


@transaction.atomic
def webhooks_delete_all(*, webhooks) -> int:
    """Delete the given webhooks (a queryset the caller may manage); how many there were."""
    count, _ = Webhook.objects.filter(pk__in=list(webhooks.values_list("pk", flat=True))).delete()
    return count


@transaction.atomic
def webhook_rotate_secret(*, webhook: Webhook) -> Webhook:
    """A new generated secret; the old one keeps signing alongside it for the grace period."""
    webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
    grace = timedelta(seconds=webhook_setting("SECRET_ROTATION_GRACE_SECONDS"))
    if webhook.secret:
        webhook.previous_secret = webhook.secret
        webhook.previous_secret_expires_at = timezone.now() + grace
    webhook.secret = generate_secret()
    webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
    return webhook


# --- deliveries -------------------------------------------------------------------------------


@transaction.atomic
def delivery_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again from the start of the retry schedule, with the same webhook-id."""
    delivery = WebhookDelivery.objects.select_for_update().select_related("webhook").get(pk=delivery.pk)
    if not delivery.webhook.active:
        raise Conflict("The webhook is inactive; activate it before redelivering.")
    if delivery.status == DeliveryStatus.DELIVERING:
        raise Conflict("This delivery is being sent right now.")
    now = timezone.now()
    delivery.status = DeliveryStatus.PENDING
    delivery.retry_index = 0
    delivery.next_attempt_at = now
    delivery.lease_expires_at = now + timedelta(seconds=webhook_setting("LEASE_SECONDS"))
    delivery.save(update_fields=["status", "retry_index", "next_attempt_at", "lease_expires_at"])
    delivery_id = delivery.pk
    transaction.on_commit(lambda: enqueue_deliveries([delivery_id]))
    return delivery


RECOVERABLE_STATUSES = (DeliveryStatus.FAILED, DeliveryStatus.SUCCEEDED, DeliveryStatus.CANCELLED)


def recover_window_start() -> datetime:
    """The oldest event time a recover (or the delivery log's `since`) may name."""
    return timezone.now() - timedelta(seconds=webhook_setting("DELIVERY_RETENTION_SECONDS"))


@transaction.atomic
def deliveries_recover(
    *, webhook: Webhook, since: datetime, until: datetime | None = None, status: str = DeliveryStatus.FAILED
) -> dict:
    """Queue again every delivery of `webhook` in `status` whose event happened in [since, until),
    oldest first, as a redelivery does: same `webhook-id`, the retry schedule from its start.

    Idempotent: queued deliveries are `pending`, so a second call while they wait finds nothing
    new to queue. Rows being changed by someone else right now are skipped (`SKIP LOCKED`) rather
    than waited for; they are in an open state anyway. At most RECOVER_MAX_DELIVERIES per call:
    `remaining` says how many more a next call would queue."""
    if not webhook.active:
        raise Conflict("The webhook is inactive; activate it before recovering its deliveries.")
    if status not in RECOVERABLE_STATUSES:
        raise ValidationError({"status": [f"Must be one of {', '.join(RECOVERABLE_STATUSES)}."]})
    oldest = recover_window_start()
    if since < oldest:
        raise ValidationError(
            {
                "since": [
                    f"Deliveries are kept for {webhook_setting('DELIVERY_RETENTION_SECONDS')} seconds: "
                    f"since must be {iso_utc(oldest)} or later."
                ]
            }
        )
    if until is not None and until <= since:
        raise ValidationError({"until": ["Must be later than since."]})
    matching = WebhookDelivery.objects.filter(webhook=webhook, status=status, event_created_at__gte=since).exclude(
        trigger_event=PING_TRIGGER
    )
    if until is not None:
        matching = matching.filter(event_created_at__lt=until)
    limit = webhook_setting("RECOVER_MAX_DELIVERIES")
    delivery_ids = list(
        matching.order_by("id").select_for_update(skip_locked=True).values_list("id", flat=True)[: limit + 1]
    )
    more = len(delivery_ids) > limit
    delivery_ids = delivery_ids[:limit]
    now = timezone.now()
    WebhookDelivery.objects.filter(pk__in=delivery_ids).update(
        status=DeliveryStatus.PENDING,
        retry_index=0,
        next_attempt_at=now,
        lease_expires_at=now + timedelta(seconds=webhook_setting("LEASE_SECONDS")),
    )
    if delivery_ids:
        transaction.on_commit(lambda: enqueue_deliveries(delivery_ids))
    return {"queued": len(delivery_ids), "remaining": matching.count() if more else 0}


def webhook_send_test(*, webhook: Webhook) -> DeliveryAttempt:
    """Send a signed PING now, in the request, and return the logged attempt whatever happened."""
    delivery = WebhookDelivery.objects.create(
        webhook=webhook,
        trigger_event=PING_TRIGGER,
        payload=sample_payload(PING_TRIGGER),
        event_created_at=timezone.now(),
        message_id=new_message_id(),
        status=DeliveryStatus.PENDING,
    )
    return attempt_delivery(delivery_id=delivery.pk, force=True, retry=False)
