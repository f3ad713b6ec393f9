"""What the request that changes a booking says about its mails, for the outbox to read without
every service passing it along: v1's `noEmail` (no mail to the attendee and guests) and the
credential (API key or OAuth token) the request was made with (the per-key sending bound). Set
around the service call by the booking views, like `translation.override`; unset (admin, tasks),
every mail goes and only the organizer's bound applies."""

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class MailSwitches:
    attendee_mail: bool = True
    credential: str | None = None


DEFAULT = MailSwitches()
_current: ContextVar[MailSwitches | None] = ContextVar("mail_switches", default=None)


def current() -> MailSwitches:
    return _current.get() or DEFAULT


@contextlib.contextmanager
def mail_switches(*, attendee_mail: bool = True, credential: str | None = None):
    token = _current.set(MailSwitches(attendee_mail=attendee_mail, credential=credential))
    try:
        yield
    finally:
        _current.reset(token)


def for_request(request, *, no_email=None):
    """The switches of an API request: its credential, and `noEmail` of a v1 body (true or "true")."""
    if no_email is None:
        data = request.data if isinstance(request.data, dict) else {}
        no_email = data.get("noEmail") in (True, "true", "True", "1", 1)
    credential = getattr(request.auth, "rate_limit_key", None)
    return mail_switches(attendee_mail=not no_email, credential=credential)
