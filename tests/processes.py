"""Real Celery processes (worker, beat) for end-to-end tests, on the test's database."""

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

from dashboard.settings.base import BASE_DIR


def database_url() -> str:
    """The test database (created by pytest-django), for the processes to use."""
    db = settings.DATABASES["default"]
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{quote(db.get('USER') or 'postgres')}{password}@{host}:{port}/{db['NAME']}"


def process_env(broker_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="dashboard.settings.base",
        DATABASE_URL=database_url(),
        REDIS_URL=broker_url,
        **extra,
    )
    return env


def celery_process(args: list[str], env: dict, log_path: Path):
    """``celery -A dashboard <args>``, stopped (before the test database is flushed or
    dropped) when the block ends."""
    return running(
        [str(Path(sys.executable).with_name("celery")), "-A", "dashboard", *args], env, log_path
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relay_process(env: dict, log_path: Path):
    """``manage.py outbox_relay``: what publishes the outbox's tasks, as in production."""
    return running([sys.executable, "manage.py", "outbox_relay"], env, log_path)


def web_process(env: dict, log_path: Path, port: int):
    """gunicorn serving the app on 127.0.0.1:``port``, as ``make run`` and compose do."""
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    command = [gunicorn, "dashboard.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"]
    return running(command, env, log_path)


@contextmanager
def running(
    command: list[str], env: dict, log_path: Path, cwd: Path = BASE_DIR
) -> Iterator[subprocess.Popen]:
    """``command`` in the background, its output in ``log_path``; stopped (terminated, then
    killed after 15 s) when the block ends."""
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
