"""Strict query-string parameters (docs/api.md, "Input rules").

A value is taken as written or refused with a 400 naming the parameter; nothing is quietly
rewritten:

- integers are ASCII digits only: `' 5'`, `'+5'`, `'5.0'` and `'٥'` (an Arabic-Indic five, which
  Python's `int()` would accept) are refused;
- booleans are `true` or `false`;
- a single-valued parameter sent twice (`?take=abc&take=5`) is refused, not read as its last copy;
- an empty value (`?take=`) is refused: it is neither absent nor a value.

(A NUL anywhere in a query string is refused before any view runs: core.middleware.)
"""

import re

from rest_framework.exceptions import ValidationError

ASCII_DIGITS = re.compile(r"[0-9]+")
MAX_DIGITS = 100  # past this, the value is refused before int() reads it


def _refuse(name: str, message: str):
    return ValidationError({name: [message]})


def single(request, name: str, *, required: bool = False) -> str | None:
    """The parameter's one value, or None when absent."""
    values = request.query_params.getlist(name)
    if not values:
        if required:
            raise _refuse(name, "This parameter is required.")
        return None
    if len(values) > 1:
        raise _refuse(name, "Give this parameter once.")
    if values[0] == "":
        raise _refuse(name, "Must not be empty.")
    return values[0]


def is_ascii_integer(raw: str) -> bool:
    """Whether `raw` is a whole number of at most MAX_DIGITS ASCII digits (for ids in paths)."""
    return len(raw) <= MAX_DIGITS and ASCII_DIGITS.fullmatch(raw) is not None


def parse_int(name: str, raw: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if not ASCII_DIGITS.fullmatch(raw):
        raise _refuse(name, f"'{raw[:40]}' is not a whole number written with the digits 0-9.")
    if len(raw) > MAX_DIGITS:
        raise _refuse(name, f"Must be at most {maximum}." if maximum is not None else "Too large.")
    value = int(raw)
    if minimum is not None and value < minimum:
        raise _refuse(name, f"Must be {minimum} or more.")
    if maximum is not None and value > maximum:
        raise _refuse(name, f"Must be at most {maximum}.")
    return value


def query_int(
    request,
    name: str,
    *,
    required: bool = False,
    default: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    raw = single(request, name, required=required)
    if raw is None:
        return default
    return parse_int(name, raw, minimum=minimum, maximum=maximum)


def query_int_list(request, name: str) -> list[int]:
    """A repeatable integer parameter: `?userId=1&userId=2` (each value ASCII digits)."""
    values = request.query_params.getlist(name)
    if any(value == "" for value in values):
        raise _refuse(name, "Must not be empty.")
    return [parse_int(name, value) for value in values]


def query_bool(request, name: str) -> bool | None:
    raw = single(request, name)
    if raw is None:
        return None
    if raw not in ("true", "false"):
        raise _refuse(name, f"'{raw[:40]}' is not 'true' or 'false'.")
    return raw == "true"
