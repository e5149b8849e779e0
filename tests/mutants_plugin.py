"""A pytest plugin for `make mutants` only: ``[tool.mutmut]`` in pyproject.toml loads it.

mutmut's fork server sets Django up once, while it collects the tests, and forks one
process per mutant from there. Every such process would inherit the test database name that
the test settings computed in the fork server, ``test_gatehouse_<the fork server's pid>``,
so two mutants tested at once would create, use and drop the same database, and each
would fail the other's tests: mutants counted as killed that no test killed. Each session
names its database after its own process instead.

Migrating a test database takes two to three seconds, longer than most mutants' tests, and
a mutant of gating/users.py can break the migration itself (its receivers run when the
roles are installed), which pytest-django then leaves behind. So the first session that
needs a database migrates a template, once per mutants/ directory (under a file lock, while
the others wait); every session copies it (CREATE DATABASE … TEMPLATE, a few hundredths of
a second) and migrates nothing; and each session drops its copy when it ends, whatever
became of it.

For each mutant, mutmut runs the tests that reached its function, and stops at the first
that fails. pytest-django runs the database tests first; here the tests without a database
go first (a scoring mutant then dies before any database is made), and within each kind
the fastest first, by the times of mutmut's first, recorded run.
"""

import fcntl
import hashlib
import json
import os
from pathlib import Path

import pytest
from django.conf import settings


def _ours() -> dict | None:
    """The test database settings, if they name a PostgreSQL database of this project."""
    test = settings.DATABASES["default"].get("TEST", {})
    return test if test.get("NAME", "").startswith("test_gatehouse_") else None


def pytest_sessionstart(session):
    test = _ours()
    if test is None:
        return  # SQLite in memory: nothing is shared
    test["NAME"] = f"test_gatehouse_{os.getpid()}"
    if session.config.option.collectonly:
        return
    root = Path(session.config.rootpath)
    with _unblocked(session):
        test["TEMPLATE"] = _template_ensure(root)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    # After pytest's own pytest_sessionfinish, which tears the session's fixtures down.
    test = _ours()
    if test is None or "TEMPLATE" not in test:
        return
    from django.db import connection, connections

    connections.close_all()
    with _unblocked(session), connection.creation._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{test["NAME"]}" WITH (FORCE)')


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, items):
    # After pytest-django's sort, whose order of the database tests this one keeps.
    durations = _recorded_durations(Path(session.config.rootpath) / "mutmut-stats.json")
    items.sort(key=lambda item: (_database_use(item), durations.get(item.nodeid, 0.0)))


def _database_use(item) -> int:
    """0: no database; 1: rolled back after; 2: flushed after (transaction=True), which
    pytest-django, as Django does, runs after those that are rolled back."""
    marker = item.get_closest_marker("django_db")
    flushed = marker is not None and (
        marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
    )
    if flushed or {"transactional_db", "live_server"} & set(item.fixturenames):
        return 2
    return 1 if marker is not None or "db" in item.fixturenames else 0


def _recorded_durations(path: Path) -> dict[str, float]:
    try:
        return json.loads(path.read_text())["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return {}  # mutmut's first run, which records them


def _unblocked(session):
    from pytest_django.plugin import blocking_manager_key

    return session.config.stash[blocking_manager_key].unblock()


def _template_ensure(root: Path) -> str:
    """The template of this mutants/ directory, migrated unless it already was. Its name is
    the directory's, so that two checkouts on one PostgreSQL never share one."""
    from django.db import connection

    template = f"test_gatehouse_mutants_{hashlib.sha1(bytes(root.resolve())).hexdigest()[:8]}"
    with open(root / ".test-database.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / ".test-database-template"
        if done.exists():
            return template
        names = connection.settings_dict["NAME"], connection.settings_dict["TEST"]["NAME"]
        connection.settings_dict["TEST"]["NAME"] = template
        try:
            connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        finally:
            # Nobody may be connected to a template while it is copied.
            connection.close()
            connection.settings_dict["NAME"], connection.settings_dict["TEST"]["NAME"] = names
        done.touch()
    return template
