"""payloadTemplate: the body of a webhook's deliveries, when it has one.

Variables are `{{name}}` with dotted paths (`{{organizer.name}}`, `{{attendees.0.email}}`,
`{{responses.name.value}}`), resolved against the payload's top-level fields plus `triggerEvent`
and `createdAt`, as in Cal.com. A variable with no value in this event (a key the trigger leaves
out, an attendee index past the end) renders empty, as Cal.com's Handlebars renders it.

A template that looks like JSON (starts with `{` or `[`) is rendered JSON-aware, by scanning it
token by token: a string literal that is exactly one `{{var}}` becomes the typed JSON value (`""`
when it has no value); a variable inside a longer string is inserted as JSON-escaped text; a bare
variable outside any string becomes the JSON value. So a quote or a newline in an attendee's name
can never break the body. Any other template is plain text (`text/plain; charset=utf-8`).

Known variables (checked on create and update): Cal.com's documented list (`DOCUMENTED_VARIABLES`)
and every dotted key of the payload of each selected trigger; below the free-form objects
(`responses`, `userFieldsResponses`, `metadata`, `customInputs`) any path is known, since their
keys depend on the booking form. docs/webhooks.md lists them.
"""

import json
import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError

VARIABLE = re.compile(r"\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}")
EXACT_VARIABLE = re.compile(r"^\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}$")
MISSING = object()


@dataclass(frozen=True)
class RenderedBody:
    body: bytes
    content_type: str


def default_body(*, trigger_event: str, created_at: str, payload: dict) -> RenderedBody:
    envelope = {"triggerEvent": trigger_event, "createdAt": created_at, "payload": payload}
    return RenderedBody(json.dumps(envelope, ensure_ascii=False).encode(), "application/json")


def template_context(*, trigger_event: str, created_at: str, payload: dict) -> dict:
    return {**payload, "triggerEvent": trigger_event, "createdAt": created_at}


def is_json_template(template: str) -> bool:
    return template.lstrip()[:1] in ("{", "[")


def lookup(context, path: str):
    value = context
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def as_text(value) -> str:
    if value is MISSING or value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def as_json(value) -> str:
    return json.dumps("" if value is MISSING else value, ensure_ascii=False)


def _substitute_in_string(literal_body: str, context) -> str:
    """`literal_body` is the raw text between a JSON string's quotes; variables become escaped text."""

    def replace(match):
        return json.dumps(as_text(lookup(context, match.group(1))), ensure_ascii=False)[1:-1]

    return VARIABLE.sub(replace, literal_body)


def _render_json(template: str, context) -> str:
    out: list[str] = []
    index, length = 0, len(template)
    while index < length:
        char = template[index]
        if char == '"':
            end = index + 1
            while end < length and template[end] != '"':
                end += 2 if template[end] == "\\" else 1
            literal_body = template[index + 1 : end]
            exact = EXACT_VARIABLE.match(literal_body)
            if exact:
                out.append(as_json(lookup(context, exact.group(1))))
            else:
                out.append('"' + _substitute_in_string(literal_body, context) + '"')
            index = end + 1
        elif template.startswith("{{", index):
            match = VARIABLE.match(template, index)
            if match:
                out.append(as_json(lookup(context, match.group(1))))
                index = match.end()
            else:
                out.append(char)
                index += 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


def render(template: str, *, trigger_event: str, created_at: str, payload: dict) -> RenderedBody:
    if not template or not template.strip():
        return default_body(trigger_event=trigger_event, created_at=created_at, payload=payload)
    context = template_context(trigger_event=trigger_event, created_at=created_at, payload=payload)
    if is_json_template(template):
        return RenderedBody(_render_json(template, context).encode(), "application/json")
    text = VARIABLE.sub(lambda match: as_text(lookup(context, match.group(1))), template)
    return RenderedBody(text.encode(), "text/plain; charset=utf-8")


# Cal.com's documented variable list ("Webhook variable list" and its Person structure). Some are
# not in every payload (`rejectionReason`, `team.*`, Person's `timezone`, spelled so in that list
# while the payload's key is `timeZone`): they are accepted and render empty, as in Cal.com.
PERSON_VARIABLES = ("name", "email", "timezone", "language.locale")
DOCUMENTED_VARIABLES = (
    "triggerEvent",
    "createdAt",
    "type",
    "title",
    "startTime",
    "endTime",
    "description",
    "location",
    "organizer",
    *(f"organizer.{name}" for name in PERSON_VARIABLES),
    "attendees",
    *(f"attendees.0.{name}" for name in PERSON_VARIABLES),
    "uid",
    "rescheduleUid",
    "cancellationReason",
    "rejectionReason",
    "team.name",
    "team.members",
    "metadata",
)
# Objects whose keys are the booking's own (form fields, metadata): any path below them is known.
FREE_FORM = ("responses", "userFieldsResponses", "metadata", "customInputs")


def variable_names(value, prefix: str = "") -> list[str]:
    """Every valid variable path of a sample context (`attendees.0.email` for list items)."""
    names: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            names.append(path)
            names.extend(variable_names(item, path))
    elif isinstance(value, list) and value:
        names.extend(variable_names(value[0], f"{prefix}.0"))
    return names


def _is_known(path: str, sample) -> bool:
    """Like `lookup`, but any list index is valid when the sample list has an element."""
    value = sample
    parts = path.split(".")
    if parts[0] in FREE_FORM and parts[0] in sample:
        return True
    for part in parts:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and value:
            value = value[0]
        else:
            return False
    return True


def _is_documented(path: str) -> bool:
    generic = ".".join("0" if part.isdigit() else part for part in path.split("."))
    return generic in DOCUMENTED_VARIABLES


def known_variables(trigger_events: list[str]) -> list[str]:
    """Every known variable for a webhook of `trigger_events`, in a stable order (for messages)."""
    from webhooks.samples import sample_payload

    names: dict[str, None] = dict.fromkeys(DOCUMENTED_VARIABLES)
    for trigger_event in trigger_events or ["PING"]:
        context = template_context(
            trigger_event=trigger_event, created_at="2026-11-20T09:00:00Z", payload=sample_payload(trigger_event)
        )
        names.update(dict.fromkeys(variable_names(context)))
    return list(names)


def validate_template(template: str, *, trigger_events: list[str]) -> None:
    """400 (Django ValidationError on `payloadTemplate`) for an unknown variable, or for a JSON
    template that does not render to valid JSON against each selected trigger's sample payload."""
    from webhooks.samples import sample_payload

    if not template or not template.strip():
        return
    created_at = "2026-11-20T09:00:00Z"
    triggers = list(trigger_events or ["PING"])
    contexts = {
        trigger_event: template_context(
            trigger_event=trigger_event, created_at=created_at, payload=sample_payload(trigger_event)
        )
        for trigger_event in triggers
    }
    unknown = sorted(
        {
            name
            for name in VARIABLE.findall(template)
            if not _is_documented(name) and not any(_is_known(name, context) for context in contexts.values())
        }
    )
    if unknown:
        valid = ", ".join(known_variables(triggers))
        raise ValidationError(
            {
                "payloadTemplate": [
                    f"Unknown variable(s): {', '.join(unknown)}. Valid variables are: {valid}"
                    f" (any path below {', '.join(FREE_FORM)})."
                ]
            }
        )
    if is_json_template(template):
        for trigger_event in triggers:
            rendered = render(
                template, trigger_event=trigger_event, created_at=created_at, payload=sample_payload(trigger_event)
            )
            try:
                json.loads(rendered.body)
            except ValueError as error:
                raise ValidationError(
                    {"payloadTemplate": [f"The template does not render to valid JSON for {trigger_event}: {error}."]}
                ) from None
