"""Typed readers for the environment, used only by `settings.py`.

Each helper returns the default when the variable is unset (or empty) and
raises `ImproperlyConfigured` naming the variable when its value is bad, so a
typo in a deployment fails at start-up instead of running with a surprise.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's text, or `default`."""
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    """true/false, yes/no, on/off or 1/0 (any case)."""
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true or false)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """A whole number, at least `minimum` when one is given."""
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={value!r} must be at least {minimum}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list; blanks around items are dropped."""
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def database_from_url(url: str, *, name: str = "DATABASE_URL") -> dict:
    """Django's DATABASES entry for `postgres://user:password@host:port/db?option=value`
    or `sqlite:////absolute/path.sqlite3` (four slashes: the path is absolute). `name` is the variable named in errors.

    >>> database_from_url("postgres://app:s%40cret@db.internal:5433/loopguard")["PASSWORD"]
    's@cret'
    """
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # as dj-database-url writes it: sqlite:// + / + the absolute path
        path = unquote(parts.path)[1:]
        if parts.netloc or not path.startswith("/") or path == "/":
            raise ImproperlyConfigured(f"{name}={url!r}: a SQLite URL is sqlite:////absolute/path/to/file")
        return sqlite_database(Path(path))
    if parts.scheme in ("postgres", "postgresql"):
        database = unquote(parts.path.lstrip("/"))
        if not database or "/" in database:
            raise ImproperlyConfigured(f"{name}={url!r}: name the database, e.g. postgres://user@host:5432/loopguard")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured(f"{name}={url!r}: the port is not a number") from None
        return {
            "ENGINE": "loopguard_site.postgresql",  # Django's, with the connections bounded
            "NAME": database,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "OPTIONS": dict(parse_qsl(parts.query)),
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(f"{name}={url!r}: the scheme must be postgres:// or sqlite://")


def sqlite_database(path: Path) -> dict:
    """Django's DATABASES entry for the SQLite file at `path`."""
    return {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path), "OPTIONS": dict(SQLITE_OPTIONS)}


# The embedded lab writes from web threads and the Celery worker thread at
# once: wait for the lock instead of failing, and take the write lock at BEGIN
# so two transactions never deadlock upgrading a read lock.
SQLITE_OPTIONS = {
    "timeout": 30,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def secret_key_from_file(path: Path) -> str:
    """The development secret key kept in `path`, created on first use."""
    if not path.exists():
        from django.core.management.utils import get_random_secret_key

        path.parent.mkdir(parents=True, exist_ok=True)
        # Created with owner-only permissions before the key is written.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first
        else:
            with os.fdopen(fd, "w") as file:
                file.write(get_random_secret_key())
    key = path.read_text().strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty: delete it to generate a new development secret key")
    return key
