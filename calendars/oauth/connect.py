"""Connecting Google Calendar or Microsoft 365: Cal.com v2's two steps, `GET
/v2/calendars/{calendar}/connect` (the authorization URL) and `GET /v2/calendars/{calendar}/save`
(the provider's redirect back, with the code and the state)."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from calendars import crypto
from calendars.dispatch import enqueue_refresh
from calendars.models import CalendarConnection, ExternalCalendar
from calendars.oauth import API
from calendars.oauth.tokens import ConnectState, Session, authorization_url, exchange_code, read_state
from calendars.providers import ProviderError
from calendars.services import ensure_destination
from core.exceptions import ApplicationError


def connect_url(*, user, kind: str, redirect_uri: str, redir: str = "", dry_run: bool = False) -> str:
    """The provider's consent page for this user (400 when the server has no app for it)."""
    return authorization_url(user=user, kind=kind, redirect_uri=redirect_uri, redir=redir, dry_run=dry_run)


@dataclass(frozen=True)
class Saved:
    state: ConnectState
    connection: CalendarConnection | None  # None: a dry run


def connect_saved(*, kind: str, state: str, code: str) -> Saved:
    """The callback: the state checked, the code exchanged (with PKCE), the account's calendars
    listed, and the connection stored (the same account connected again gets the new tokens and
    is valid again). Nothing is stored when any step fails; a failure is a 400 naming why."""
    checked = read_state(state, kind)
    user = get_user_model().objects.filter(pk=checked.user_id, is_active=True).first()
    if user is None:
        raise ApplicationError("The user who asked to connect the calendar no longer exists.")
    if checked.dry_run:
        return Saved(state=checked, connection=None)
    if not code:
        raise ApplicationError("The callback has no authorization code.")
    try:
        secret = exchange_code(kind, code=code, state=checked)
        session = Session(kind, secret)
        account, found = API[kind].discover(session)
    except ProviderError as error:
        raise ApplicationError(str(error)) from None
    if not found:
        raise ApplicationError("The account has no calendars.")
    secret = {**session.secret, "account": account}
    return Saved(state=checked, connection=_store(user=user, kind=kind, account=account, secret=secret, found=found))


@transaction.atomic
def _store(*, user, kind: str, account: str, secret: dict, found) -> CalendarConnection:
    connection = CalendarConnection.objects.filter(user=user, kind=kind, label=account).first() if account else None
    if connection is None:
        connection = CalendarConnection.objects.create(
            user=user, kind=kind, label=account, credentials=crypto.encrypt(secret)
        )
    else:
        connection.credentials, connection.invalid, connection.last_error = crypto.encrypt(secret), False, ""
        connection.save(update_fields=["credentials", "invalid", "last_error"])
    known = set(connection.calendars.values_list("external_id", flat=True))
    ExternalCalendar.objects.bulk_create(
        ExternalCalendar(
            connection=connection,
            external_id=calendar.external_id,
            name=calendar.name,
            time_zone=calendar.time_zone or user.time_zone,
            read_only=calendar.read_only,
        )
        for calendar in found
        if calendar.external_id not in known
    )
    ensure_destination(user, list(connection.calendars.order_by("id")))
    enqueue_refresh(connection.pk)
    return connection
