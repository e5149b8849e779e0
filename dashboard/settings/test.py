"""Test mode: PostgreSQL and Redis on 127.0.0.1 when they are reachable.

Under ``CI=true`` an unreachable PostgreSQL or Redis is an error, never a silent
fall-back to the embedded defaults. Elsewhere the suite falls back to SQLite, and the
tests that need Redis skip.
"""

import os
import socket

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import REDIS_TRANSPORT_OPTIONS, env

_IN_CI = env.bool("CI", default=False)
_PG_URL = env.str("TEST_DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/gatehouse")
# Each pytest-xdist worker has a Redis database of its own (15, 14, ...), so that Redis
# tests run under `pytest -n` never share one: two Celery workers started by tests on two
# xdist workers at once took each other's tasks. (`make test` runs them apart, serially.)
_XDIST_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_REDIS_URL = env.str("TEST_REDIS_URL", default=f"redis://127.0.0.1:6379/{15 - _XDIST_WORKER % 8}")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


POSTGRES_AVAILABLE = _reachable("127.0.0.1", 5432)
REDIS_AVAILABLE = _reachable("127.0.0.1", 6379)
if _IN_CI and not (POSTGRES_AVAILABLE and REDIS_AVAILABLE):
    raise ImproperlyConfigured(
        "CI=true needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 "
        f"(PostgreSQL reachable: {POSTGRES_AVAILABLE}, Redis reachable: {REDIS_AVAILABLE})."
    )

if POSTGRES_AVAILABLE:
    DATABASES = {"default": env.db_url_config(_PG_URL)}
    DATABASES["default"]["TEST"] = {"NAME": f"test_gatehouse_{os.getpid()}"}
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}

if REDIS_AVAILABLE:
    REDIS_URL = _REDIS_URL
    CELERY_BROKER_URL = _REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = REDIS_TRANSPORT_OPTIONS

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Gold checks are drawn by a hash of the output's id, which a test does not choose: left on,
# a few of any test's audits would grow a gold round by the luck of the sequence. The tests
# of gold checks, and the demo's, set the share they test.
REVIEW_GOLD_SHARE = 0.0
