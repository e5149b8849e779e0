"""What the benchmarks share: a scratch PostgreSQL database, the app under gunicorn, and
percentiles. Run the benchmarks as modules from the repository root
(``python -m bench.queue``): as a script, ``bench/queue.py`` would shadow the standard
library's ``queue`` for everything it imports."""

from __future__ import annotations

import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"

PG_ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"
HOST = "127.0.0.1"

Log = Callable[[str], None]


def git_state(
    *paths: str, short: bool = False, untracked: bool = True
) -> tuple[str, list[str]] | None:
    """The checkout's commit and its uncommitted changes (under ``paths``, if given; new
    files too unless ``untracked`` is off): what a benchmark's figures belong to. None
    outside git."""
    head = ["git", "rev-parse", *(["--short"] if short else []), "HEAD"]
    status = ["git", "status", "--porcelain", *([] if untracked else ["--untracked-files=no"])]
    status += ["--", *paths]
    try:
        commit, changed = (
            subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
            for cmd in (head, status)
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit.strip(), [line[3:] for line in changed.splitlines()]


def git_objects(*revisions: str) -> list[str] | None:
    """The object ids of ``revisions`` such as "HEAD:learning"; None outside git or where one
    is missing."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", *revisions], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split()


def percentile(sorted_values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return None
    rank = max(1, round(pct / 100 * len(sorted_values) + 0.4999))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def app_env(db_name: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{db_name}",
        DJANGO_SETTINGS_MODULE="dashboard.settings.base",
        REDIS_URL=REDIS_URL,
        DEBUG="false",
        LOG_LEVEL="WARNING",
    )
    return env


def recreate_database(db_name: str) -> str:
    """Drop and create the bench database; return the server's version string."""
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db_name}"')
        return conn.execute("SHOW server_version").fetchone()[0]


def drop_database(db_name: str) -> None:
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')


def manage(env: dict[str, str], *args: str, cwd: Path = ROOT) -> str:
    """Run manage.py (of the checkout at ``cwd``); its stdout is returned, its stderr
    passes through to ours."""
    done = subprocess.run(
        [str(PYTHON), "manage.py", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return done.stdout


def start_gunicorn(
    env: dict[str, str],
    port: int,
    workers: int,
    threads: int,
    log_file: Path,
    *,
    log: Log,
    cwd: Path = ROOT,
) -> subprocess.Popen:
    """gunicorn serving the checkout at ``cwd`` (another commit's worktree, for an A/B
    run: gunicorn puts its working directory first on the path), with this venv."""
    cmd = [str(GUNICORN), "dashboard.wsgi", "--bind", f"{HOST}:{port}", "--workers", str(workers)]
    if threads > 1:
        cmd += ["--worker-class", "gthread", "--threads", str(threads)]
    log(f"starting: {' '.join(cmd[1:])}")
    with log_file.open("wb") as fh:
        # Own session: a Ctrl-C on the terminal reaches only us, and we stop it in order.
        return subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )


def wait_healthy(proc: subprocess.Popen, port: int, timeout_s: float = 30.0) -> None:
    url = f"http://{HOST}:{port}/healthz"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer 200 within {timeout_s:.0f} s")


def stop_gunicorn(proc: subprocess.Popen, *, log: Log) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)  # graceful: workers finish their request and exit
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        log("gunicorn did not stop within 30 s; killing it")
        proc.kill()
        proc.wait()


def worktree_add(revision: str, *, log: Log) -> Path:
    """A detached worktree of ``revision`` in a temporary directory, to serve the code
    before a change beside the code after it. Remove it with worktree_remove."""
    path = Path(tempfile.mkdtemp(prefix="gatehouse-against-"))
    path.rmdir()
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--quiet", str(path), revision],
        cwd=ROOT,
        check=True,
    )
    log(f"worktree of {revision} at {path}")
    return path


def worktree_remove(path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)


def machine_facts(pg_version: str) -> dict:
    """What the figures were measured on."""
    mem_kib = 0
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    import django
    import gunicorn

    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "memory_gib": round(mem_kib / 2**20, 1),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "django": django.__version__,
        "gunicorn": gunicorn.__version__,
        "psycopg": psycopg.__version__,
        "postgresql": pg_version,
    }


def stderr_log(bench: str) -> Log:
    """Progress lines on stderr, so that stdout carries only the JSON result."""

    def log(message: str) -> None:
        print(f"[bench.{bench}] {message}", file=sys.stderr, flush=True)

    return log


def db_counts(db_name: str, queries: dict[str, str]) -> dict:
    """One scalar per named SQL query, read from the bench database."""
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={db_name}") as conn:
        return {name: conn.execute(sql).fetchone()[0] for name, sql in queries.items()}
