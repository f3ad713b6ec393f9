"""Input limits: how much a client may send, read through one accessor.

The numbers live in `settings.API_LIMITS` (config/settings.py; docs/api.md, "Limits") and are read
when used, so a test may override one with the `settings` fixture.

`inspect_json` walks a parsed JSON value once, without recursion (a body nested thousands of
levels deep must cost a loop, not a stack overflow), and reports the first rule it breaks.
"""

from dataclasses import dataclass

from django.conf import settings


def limit(name: str) -> int:
    """One number of `settings.API_LIMITS` (config/settings.py lists them all)."""
    return settings.API_LIMITS[name]


NUL = "\x00"


@dataclass(frozen=True)
class JsonProblem:
    path: str  # where, as the error keys name fields: `metadata.notes[2]`; "" for the whole body
    message: str
    too_deep: bool = False


@dataclass(frozen=True)
class JsonBounds:
    max_depth: int
    max_keys: int | None = None
    max_items: int | None = None
    max_string_chars: int | None = None


# What the renderer (orjson) can write: signed and unsigned 64-bit integers.
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
# PostgreSQL's jsonb keeps a number as an exact decimal, and writes one with no fraction as an
# integer: `1e20` comes back as the integer 100000000000000000000. So a number with a fraction or
# exponent is held to the same range as an integer, or it would come back as one no renderer writes.
# Strictly inside it: a float is stored as its shortest text (-2**63 as -9.223372036854776e+18,
# below the range), and the floats just inside the two ends are stored inside it.
NUMBER_RANGE = f"Numbers must lie between {INT_MIN} and {INT_MAX}."


def _text_problem(text: str, bounds: JsonBounds) -> str | None:
    if NUL in text:
        return "Must not contain NUL characters."
    if bounds.max_string_chars is not None and len(text) > bounds.max_string_chars:
        return f"Must be at most {bounds.max_string_chars} characters."
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "Must not contain lone UTF-16 surrogates."
    return None


def _child_path(path: str, key) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def inspect_json(value, bounds: JsonBounds, path: str = "") -> JsonProblem | None:
    """The first broken rule in a parsed JSON value, or None.

    Depth counts containers: `{}` and `[]` are depth 1, `{"a": [1]}` is depth 2. Strings (object
    keys included) must not contain NUL or a lone surrogate: PostgreSQL can store neither. Integers
    must fit in 64 bits, which is what the renderer can write back; other numbers must lie in the
    same range (`NUMBER_RANGE`; `1e400` is read as infinity, which is outside it too).
    """
    stack = [(value, path, 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item, bounds)
            if problem is not None:
                return JsonProblem(where, problem)
            continue
        if isinstance(item, int) and not isinstance(item, bool):
            if not INT_MIN <= item <= INT_MAX:
                return JsonProblem(where, "Integers must fit in 64 bits.")
            continue
        if isinstance(item, float):
            if not INT_MIN < item < INT_MAX + 1:  # False for infinity and NaN as well
                return JsonProblem(where, NUMBER_RANGE)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > bounds.max_depth:
            return JsonProblem(where, f"Nested deeper than {bounds.max_depth} levels.", too_deep=True)
        if isinstance(item, dict):
            if bounds.max_keys is not None and len(item) > bounds.max_keys:
                return JsonProblem(where, f"Must have at most {bounds.max_keys} keys.")
            for key, child in item.items():
                problem = _text_problem(key, bounds)
                if problem is not None:
                    return JsonProblem(where, f"Keys: {problem}")
                stack.append((child, _child_path(where, key), depth + 1))
        else:
            if bounds.max_items is not None and len(item) > bounds.max_items:
                return JsonProblem(where, f"Must have at most {bounds.max_items} items.")
            stack.extend((child, _child_path(where, index), depth + 1) for index, child in enumerate(item))
    return None


def json_text_depth_exceeds(text: str, max_depth: int) -> bool:
    """Whether JSON-looking text nests arrays/objects deeper than `max_depth`, without parsing it
    (for templates that are stored as text and parsed later). Brackets inside string literals do
    not count."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif char in "]}":
            depth -= 1
    return False
