"""Configuration: what CI runs against, and production's deploy check."""

import os
import socket
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from dashboard.settings.base import BASE_DIR

# Slow (starts Django in subprocesses): `make check` leaves it out.
pytestmark = pytest.mark.slow


def test_ci_runs_against_postgresql_and_redis():
    if os.environ.get("CI") != "true":
        pytest.skip("only CI=true insists on both services")
    assert connection.vendor == "postgresql"
    assert settings.CELERY_BROKER_URL.startswith("redis://")


def _manage(*args, env_extra):
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "dashboard.settings.production",
    "SECRET_KEY": "x" * 30 + "-a-long-random-production-secret-key-value",
    "ALLOWED_HOSTS": "gatehouse.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def test_production_passes_check_deploy_without_warnings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env_extra=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "SECRET_KEY"}
    result = _manage("check", env_extra=env)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.parametrize("empty", ["", "   "])
def test_production_refuses_to_start_with_an_empty_secret_key(empty):
    result = _manage("check", env_extra={**PRODUCTION_ENV, "SECRET_KEY": empty})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "SECRET_KEY" in result.stderr


def test_demo_mode_is_not_deployable_and_says_so():
    env = {"DJANGO_SETTINGS_MODULE": "dashboard.settings.base", "DEBUG": "true"}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env_extra=env)
    assert result.returncode != 0
    assert "security.W" in result.stderr + result.stdout


@pytest.mark.parametrize("share", ["1", "1.5", "-0.1", "a quarter"])
def test_a_fit_share_that_leaves_nothing_to_certify_stops_the_start(share):
    result = _manage("check", env_extra={"LEARNING_FIT_SHARE": share})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "LEARNING_FIT_SHARE" in result.stderr


@pytest.mark.parametrize("seconds", ["-1", "31"])
def test_an_undo_window_out_of_range_stops_the_start(seconds):
    result = _manage("check", env_extra={"REVIEW_UNDO_SECONDS": seconds})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "REVIEW_UNDO_SECONDS" in result.stderr


@pytest.mark.parametrize("seconds", ["0", "61", "soon"])
def test_a_connect_timeout_out_of_range_stops_the_start(seconds):
    result = _manage("check", env_extra={"DATABASE_CONNECT_TIMEOUT_SECONDS": seconds})
    assert result.returncode != 0
    assert "DATABASE_CONNECT_TIMEOUT_SECONDS" in result.stderr


@pytest.mark.parametrize("mode", ["base", "production"])
def test_a_database_that_never_answers_fails_within_the_connect_timeout(mode, tmp_path):
    """A listener that takes the connection and never says a word, as a hung database host
    does: libpq alone would wait for ever; the setting makes it give up."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        env = {
            **PRODUCTION_ENV,
            "DJANGO_SETTINGS_MODULE": f"dashboard.settings.{mode}",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{port}/gatehouse",
            "DATABASE_CONNECT_TIMEOUT_SECONDS": "1",
        }
        code = (
            "import django; django.setup(); from django.db import connection\n"
            "try:\n    connection.ensure_connection()\n"
            "except Exception as e:\n    print(type(e).__name__, e)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=BASE_DIR, env={**os.environ, **env},
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert "OperationalError" in done.stdout and "timeout" in done.stdout.lower(), (
        done.stdout + done.stderr
    )
