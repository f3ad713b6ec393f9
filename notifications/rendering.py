"""A queued message as a MIME e-mail: subject, text and HTML parts from the templates
`notifications/templates/notifications/email.txt` and `email.html` beside it (a project template
of the same name overrides them), in the recipient's language and time zone, with the invitation attached.

Everything a booker typed (names, title, answers, reason) reaches the HTML part through the
template engine's autoescaping only, and a header only with its line breaks folded to spaces, so
that no value can add a header or markup.
"""

from datetime import datetime
from email.utils import formataddr
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import formats, translation
from django.utils.translation import gettext as _

from notifications.invitations import invitation
from notifications.models import EmailMessage, Kind, Role


def one_line(value: str) -> str:
    """A value fit for a header: every run of whitespace (CR and LF included) becomes one space."""
    return " ".join(str(value).split())


def _when(value: str | None, zone: ZoneInfo) -> str:
    if not value:
        return ""
    local = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zone)
    # The language's own date (month names and order), a 24-hour time: unambiguous in every language.
    return f"{formats.date_format(local, 'DATE_FORMAT')} {local:%H:%M} ({zone.key})"


def _wording(message: EmailMessage, context: dict, when: str) -> tuple[str, str, str]:
    """(subject, heading, lead) of a message, in the active language."""
    title = one_line(context["title"])
    organizer_side = message.role == Role.ORGANIZER
    kind = message.kind
    if kind == Kind.SCHEDULED and organizer_side:
        return (
            _("New event: %(title)s at %(when)s") % {"title": title, "when": when},
            _("A new event has been scheduled"),
            _("Someone booked a meeting with you."),
        )
    if kind in (Kind.SCHEDULED, Kind.CONFIRMED):
        lead = _("The organizer accepted your request.") if kind == Kind.CONFIRMED else _("You are booked.")
        return (
            _("Confirmed: %(title)s at %(when)s") % {"title": title, "when": when},
            _("Your meeting is scheduled"),
            lead,
        )
    if kind == Kind.REQUESTED and organizer_side:
        return (
            _("Action required: %(title)s at %(when)s") % {"title": title, "when": when},
            _("A booking request is waiting for you"),
            _("Confirm or reject booking %(id)s.") % {"id": context["bookingId"]},
        )
    if kind == Kind.REQUESTED:
        return (
            _("Request submitted: %(title)s at %(when)s") % {"title": title, "when": when},
            _("Your request has been submitted"),
            _("You will get another e-mail once the organizer has decided."),
        )
    if kind == Kind.REJECTED:
        return (
            _("Declined: %(title)s at %(when)s") % {"title": title, "when": when},
            _("Your booking request was declined"),
            _("The organizer could not accept this request."),
        )
    if kind == Kind.RESCHEDULED:
        return (
            _("Rescheduled: %(title)s at %(when)s") % {"title": title, "when": when},
            _("This meeting has been moved"),
            _("It now takes place at the time below."),
        )
    if kind == Kind.CANCELLED:
        return (
            _("Cancelled: %(title)s at %(when)s") % {"title": title, "when": when},
            _("This meeting has been cancelled"),
            _("It has been removed from the calendar."),
        )
    minutes = context.get("minutesBefore", 0)
    return (
        _("Reminder: %(title)s at %(when)s") % {"title": title, "when": when},
        _("Your meeting starts in %(minutes)s minutes") % {"minutes": minutes},
        _("A reminder of your upcoming meeting."),
    )


def build_email(message: EmailMessage, connection=None) -> EmailMultiAlternatives:
    context = message.context
    zone = ZoneInfo(message.time_zone or "UTC")
    with translation.override(message.locale.replace("_", "-").lower() or "en"):
        when = _when(context["start"], zone)
        subject, heading, lead = _wording(message, context, when)
        template_context = {
            **context,
            "heading": heading,
            "lead": lead,
            "when": when,
            "until": _when(context["end"], zone),
            "previous_when": _when(context.get("previousStart"), zone),
            "occurrences_when": [_when(each["start"], zone) for each in context.get("occurrences") or []],
            "is_organizer": message.role == Role.ORGANIZER,
            "kind": message.kind,
            "language": translation.get_language(),
        }
        text = render_to_string("notifications/email.txt", template_context)
        html = render_to_string("notifications/email.html", template_context)
    method, calendar = invitation(context)
    organizer = context["organizer"]
    email = EmailMultiAlternatives(
        subject=one_line(subject),
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[formataddr((one_line(context.get("recipientName") or ""), message.recipient))],
        reply_to=[formataddr((one_line(organizer["name"]), organizer["email"]))],
        headers={"Message-ID": message.message_id, "Auto-Submitted": "auto-generated"},
        connection=connection,
    )
    email.attach_alternative(html, "text/html")
    email.attach_alternative(calendar.decode(), f"text/calendar; method={method}")
    email.attach("invite.ics", calendar, "application/ics")
    return email
