"""`cal-api-version`: which shape of an operation a request gets, resolved as Cal.com's API v2 does.

Cal.com's version extractor takes the header when it is one of its known versions and otherwise
(absent, misspelt, a future date) falls back to its default, 2024-04-15. Each controller then
serves a set of versions; the operations here name, per operation, which shape a resolved version
selects (`shape_for`). The table is docs/migrating-from-cal.md, "Versions".
"""

from collections.abc import Mapping

HEADER = "HTTP_CAL_API_VERSION"

V2024_04_15 = "2024-04-15"
V2024_06_11 = "2024-06-11"
V2024_06_14 = "2024-06-14"
V2024_08_13 = "2024-08-13"
V2024_09_04 = "2024-09-04"
V2026_02_25 = "2026-02-25"
V2026_05_01 = "2026-05-01"

KNOWN = (V2024_04_15, V2024_06_11, V2024_06_14, V2024_08_13, V2024_09_04, V2026_02_25, V2026_05_01)
DEFAULT = V2024_04_15


def requested_version(request) -> str:
    """The version the request resolves to: the header if known, else Cal.com's default."""
    sent = (request.META.get(HEADER) or "").strip()
    return sent if sent in KNOWN else DEFAULT


def shape_for(version: str, shapes: Mapping[str, tuple[str, ...]], default: str) -> str:
    """The name of the shape serving `version`: `shapes` maps a shape to the versions it serves;
    a version none of them names gets `default` (the shape Cal.com serves to its default)."""
    for shape, versions in shapes.items():
        if version in versions:
            return shape
    return default
