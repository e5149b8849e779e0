"""Migrations that must not lock the gate's tables while they run."""

import pytest
from django.core.management import call_command
from django.db import connection

from gating.models import ReviewItem


# Outside a transaction, as migrate runs it: CONCURRENTLY refuses to run inside one.
@pytest.mark.django_db(transaction=True)
def test_the_open_adjudications_index_is_built_and_dropped_concurrently(requires_postgres, capsys):
    call_command("sqlmigrate", "gating", "0009")
    forwards = capsys.readouterr().out
    call_command("sqlmigrate", "gating", "0009", backwards=True)
    backwards = capsys.readouterr().out

    assert 'CREATE INDEX CONCURRENTLY "item_open_adjudications"' in forwards
    assert 'DROP INDEX CONCURRENTLY IF EXISTS "item_open_adjudications"' in backwards
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, ReviewItem._meta.db_table)
    assert constraints["item_open_adjudications"]["columns"] == ["queued_at", "id"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("migration", "indexes"),
    [
        (
            "0012_audit_share_indexes",
            {
                "item_open_audits_first": ["is_audit", "queued_at", "id"],
                "item_claims_by_time": ["claimed_by_id", "claimed_at"],
            },
        ),
        ("0013_audits_by_time_index", {"item_audits_by_time": ["queued_at"]}),
    ],
)
def test_the_audit_indexes_are_built_and_dropped_concurrently(
    requires_postgres, capsys, migration, indexes
):
    call_command("sqlmigrate", "gating", migration)
    forwards = capsys.readouterr().out
    call_command("sqlmigrate", "gating", migration, backwards=True)
    backwards = capsys.readouterr().out

    for name in indexes:
        assert f'CREATE INDEX CONCURRENTLY "{name}"' in forwards
        assert f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"' in backwards
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, ReviewItem._meta.db_table)
    assert {name: constraints[name]["columns"] for name in indexes} == indexes
