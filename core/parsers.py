"""The one JSON parser of the API (the default parser of every DRF view).

What it checks, once, for every body, before any serializer sees it:

- the body is JSON (no NaN or Infinity) in UTF-8;
- arrays and objects nest at most `API_LIMITS["JSON_MAX_DEPTH"]` levels (a 400 naming the limit):
  deeper bodies cost the parser, the validators and the renderer stack depth, and a stored value
  nested past the renderer's own limit could never be shown again;
- no string or key contains NUL or a lone surrogate (`"\\ud800"`), and every integer fits in 64
  bits (a 400 naming the field): PostgreSQL could not store the first two, and the renderer could
  not write the third back.

Python's json module (not orjson) reads the body because it keeps integers as written; orjson
turns one past 64 bits into a float, silently changing the number.

The size of the body is bounded before parsing by Django's `DATA_UPLOAD_MAX_MEMORY_SIZE` (a 413).
"""

import json
import re

from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from core.limits import JsonBounds, inspect_json, limit


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = json.loads(stream.read().decode("utf-8"), parse_constant=_refuse_constant)
        except RecursionError:
            # The C scanner stops at the interpreter's recursion limit (about 1000 levels).
            raise ParseError(self._depth_message()) from None
        except UnicodeDecodeError:
            raise ParseError("JSON parse error - the body is not UTF-8.") from None
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        problem = inspect_json(data, JsonBounds(max_depth=limit("JSON_MAX_DEPTH")))
        if problem is not None:
            if problem.too_deep:
                raise ParseError(self._depth_message())
            # Keyed by the top-level field, as the field's own validation would be; the message
            # says where inside it.
            field = re.split(r"[.\[]", problem.path, maxsplit=1)[0] or "non_field_errors"
            where = f" (at {problem.path})" if problem.path and problem.path != field else ""
            raise ValidationError({field: [problem.message + where]})
        return data

    @staticmethod
    def _depth_message() -> str:
        return (
            f"The JSON body is nested deeper than {limit('JSON_MAX_DEPTH')} levels of arrays and objects "
            "(API_LIMITS['JSON_MAX_DEPTH'])."
        )
