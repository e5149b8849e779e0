"""Migrations that must not lock the gate's tables while they run."""

from importlib import import_module

import pytest
from django.core.management import call_command
from django.db import connection

from gating.models import ReviewItem


def sql_of(capsys, migration: str) -> tuple[str, str]:
    """The SQL of a gating migration, forwards and backwards."""
    call_command("sqlmigrate", "gating", migration)
    forwards = capsys.readouterr().out
    call_command("sqlmigrate", "gating", migration, backwards=True)
    return forwards, capsys.readouterr().out


# Outside a transaction, as migrate runs it: CONCURRENTLY refuses to run inside one.
@pytest.mark.django_db(transaction=True)
def test_the_open_adjudications_index_is_built_and_dropped_concurrently(requires_postgres, capsys):
    forwards, backwards = sql_of(capsys, "0009")

    assert 'CREATE INDEX CONCURRENTLY "item_open_adjudications"' in forwards
    assert 'DROP INDEX CONCURRENTLY IF EXISTS "item_open_adjudications"' in backwards


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("migration", "indexes"),
    [
        (
            "0012_audit_share_indexes",
            ["item_open_audits_first", "item_claims_by_time"],
        ),
        ("0013_audits_by_time_index", ["item_audits_by_time"]),
    ],
)
def test_the_audit_indexes_are_built_and_dropped_concurrently(
    requires_postgres, capsys, migration, indexes
):
    forwards, backwards = sql_of(capsys, migration)

    for name in indexes:
        assert f'CREATE INDEX CONCURRENTLY "{name}"' in forwards
        assert f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"' in backwards


TURN_INDEXES = {
    "item_open_by_turn": ["turn_at", "id"],
    "item_open_task_by_turn": ["task_type_id", "turn_at", "id"],
    "item_open_adjud_by_turn": ["turn_at", "id"],
    "item_open_audits_by_turn": ["is_audit", "turn_at", "id"],
}
AGE_INDEXES = (
    "item_open_by_age",
    "item_open_task_by_age",
    "item_open_adjudications",
    "item_open_audits_first",
)


@pytest.mark.django_db(transaction=True)
def test_the_claim_indexes_move_to_turns_without_a_gap_or_a_lock(requires_postgres, capsys):
    forwards, backwards = sql_of(capsys, "0018")

    # Each new index is built before any old one is dropped, and both without a lock.
    last_create = max(forwards.index(f'CREATE INDEX CONCURRENTLY "{n}"') for n in TURN_INDEXES)
    first_drop = min(
        forwards.index(f'DROP INDEX CONCURRENTLY IF EXISTS "{n}"') for n in AGE_INDEXES
    )
    assert last_create < first_drop
    for name in AGE_INDEXES:
        assert f'CREATE INDEX CONCURRENTLY "{name}"' in backwards
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, ReviewItem._meta.db_table)
    assert {name: constraints[name]["columns"] for name in TURN_INDEXES} == TURN_INDEXES
    assert not set(AGE_INDEXES) & set(constraints)


@pytest.mark.django_db
def test_the_open_items_are_given_their_outputs_turn(held_outputs, user_in):
    # As before the migration: an output whose first round was decided and whose second
    # round waits, one held output waiting, and no turns kept.
    from django.apps import apps

    from gating import reviews
    from gating.roles import Role

    first_output, waiting = held_outputs(2, double_review_rate=1.0)
    first = reviews.item_claim(reviewer=user_in(Role.REVIEWER))
    reviews.item_decide(
        item_id=first.pk, reviewer=first.claimed_by, decision=reviews.DecisionInput("approve")
    )
    ReviewItem.objects.update(turn_at=None)
    migration = import_module("gating.migrations.0018_review_item_turns")

    migration.give_open_items_their_turn(apps, None)

    turns = {
        (i.output_id, i.kind): (i.state, i.turn_at, i.queued_at) for i in ReviewItem.objects.all()
    }
    first_queued = turns[first_output.pk, "review"][2]
    assert turns[first_output.pk, "review"][:2] == ("decided", None)  # history left alone
    assert turns[first_output.pk, "second"][:2] == ("open", first_queued)
    assert turns[first_output.pk, "second"][2] > first_queued
    assert turns[waiting.pk, "review"][:2] == ("open", turns[waiting.pk, "review"][2])
