"""Where `make run`'s own PostgreSQL lives when DATABASE_URL is not set: a data directory under
var/ and a Unix socket beside it. The settings read the default DATABASE_URL from here; the runner
that starts that server (devserver/embedded_postgres.py) reads the same places.

Only the standard library: the settings ask for the URL before Django is set up.
"""

import hashlib
import tempfile
from pathlib import Path

DATABASE_NAME = "scheduling"
SUPERUSER = "postgres"
SOCKET_NAME = ".s.PGSQL.5432"
SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def data_dir(var_dir: Path) -> Path:
    return Path(var_dir) / "postgres"


def socket_dir(var_dir: Path) -> Path:
    """var/postgres-socket, or a directory under /tmp named after var/ when that path is too long
    for a Unix socket (a deeply nested checkout)."""
    preferred = Path(var_dir) / "postgres-socket"
    if len(str(preferred / SOCKET_NAME)) <= SOCKET_PATH_MAX:
        return preferred
    digest = hashlib.sha256(str(Path(var_dir).resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"scheduling-postgres-{digest}"


def database_url(var_dir: Path) -> str:
    # The socket directory goes in the `host` query parameter: django-environ would not decode a
    # percent-encoded path in the host part of the URL.
    return f"postgres://{SUPERUSER}@/{DATABASE_NAME}?host={socket_dir(var_dir)}"
