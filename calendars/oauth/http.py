"""The one way this package talks to Google's and Microsoft's servers: plain HTTPS through the
pinned `requests` session of `calendars.network` (the one CalDAV and feeds use), so each request
connects to the address the outbound rule checked; each answer bounded in time and size, and every
failure turned into a `ProviderError` that names the provider and why, never a token.

Plain HTTP to the documented REST APIs rather than Google's and Microsoft's SDKs: the few calls
used here (token, calendar list, events) do not justify their dependency trees, and a plain client
is what lets the tests replay recorded answers from a local server."""

from dataclasses import dataclass, field

import orjson
import requests

from calendars.conf import calendar_setting
from calendars.network import AnswerTooLarge, AnswerTooSlow, pinned_session, read_bounded
from calendars.providers import ProviderError, check_url
from core.outbound import TargetRefused


class TokenRejected(ProviderError):
    """The API refused the access token (HTTP 401): refresh it and try once more."""


class RateLimited(ProviderError):
    """HTTP 429 (or 503 with Retry-After): `retry_after` seconds before asking again."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Answer:
    status: int
    data: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)  # names in lower case


def _retry_after(value: str | None) -> int:
    try:
        return max(0, min(int(value or "0"), 86400))
    except ValueError:
        return 0


def _message(data: dict) -> str:
    """The provider's own words for an error: Google and Graph put them in error.message, the token
    endpoints in error / error_description."""
    error = data.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or "")[:200]
    if isinstance(error, str):
        return f"{error}: {data.get('error_description', '')}"[:200].rstrip(": ")
    return ""


def request(
    title: str,
    method: str,
    url: str,
    *,
    token: str | None = None,
    timeout: float | None = None,
    **kwargs,
) -> Answer:
    """One request; the answer of any status, its JSON body read (bounded). Transport failures and
    bodies that are too large or not JSON are a ProviderError."""
    check_url(url)
    limit = calendar_setting("MAX_RESPONSE_BYTES")
    timeout = timeout or calendar_setting("TIMEOUT_SECONDS")
    headers = {"Accept": "application/json", **kwargs.pop("headers", {})}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with pinned_session() as session:
            with session.request(
                method, url, headers=headers, timeout=timeout, allow_redirects=False, stream=True, **kwargs
            ) as response:
                body = read_bounded(response, limit=limit, timeout=timeout)
    except AnswerTooLarge:
        raise ProviderError(f"{title} answered more than {limit} bytes.") from None
    except AnswerTooSlow:
        raise ProviderError(f"{title} took more than {timeout:g} s to answer.") from None
    except TargetRefused as refusal:
        raise ProviderError(str(refusal)) from None
    except requests.RequestException as error:
        raise ProviderError(f"{title} could not be reached ({type(error).__name__}).") from None
    data: dict = {}
    if body.strip():
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            if response.status_code < 400:
                raise ProviderError(f"{title} answered something other than a JSON object.")
            parsed = {}
        data = parsed
    headers = {name.lower(): value for name, value in response.headers.items()}
    return Answer(status=response.status_code, data=data, headers=headers)


def refuse(title: str, answer: Answer, action: str) -> ProviderError:
    """The error for an answer that is not a success."""
    said = _message(answer.data).rstrip(". ")
    suffix = f": {said}" if said else ""
    if answer.status == 401:
        return TokenRejected(f"{title} refused the access token while {action}{suffix}.")
    wait = _retry_after(answer.headers.get("retry-after"))
    if answer.status == 429 or (answer.status == 503 and wait):
        wait = wait or 60
        return RateLimited(f"{title} asked to wait {wait} s before {action} (HTTP {answer.status}).", wait)
    if answer.status == 403:
        return ProviderError(f"{title} refused access while {action} (HTTP 403){suffix}.")
    return ProviderError(f"{title} answered HTTP {answer.status} while {action}{suffix}.")
