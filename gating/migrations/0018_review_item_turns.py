"""Review items keep their place in line (``turn_at``), and the claim's indexes order by it.

A column that may be null is added at no cost, and only the open items are given a turn:
the decided history, however long, is neither rewritten nor scanned under a lock. The new
indexes are built, concurrently on PostgreSQL, before the old ones are dropped, so that no
claim is ever without one."""

from importlib import import_module

from django.conf import settings
from django.contrib.postgres.operations import RemoveIndexConcurrently
from django.db import migrations, models
from django.db.migrations.operations import RemoveIndex

# CREATE INDEX CONCURRENTLY on PostgreSQL, a plain index elsewhere (see 0009).
AddIndexConcurrentlyOnPostgreSQL = import_module(
    "gating.migrations.0009_open_adjudications_index"
).AddIndexConcurrentlyOnPostgreSQL


class RemoveIndexConcurrentlyOnPostgreSQL(RemoveIndexConcurrently):
    """DROP INDEX CONCURRENTLY on PostgreSQL, where a plain DROP INDEX would wait for, and
    then block, the claims reading the table; a plain drop elsewhere."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            RemoveIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            RemoveIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


FOLLOW_UPS = ("second", "adjudication")


def give_open_items_their_turn(apps, schema_editor):
    """An open first round's turn is when it was queued; an open follow-up's, when its
    output's first round was."""
    ReviewItem = apps.get_model("gating", "ReviewItem")
    open_items = ReviewItem.objects.filter(state="open")
    open_items.exclude(kind__in=FOLLOW_UPS).update(turn_at=models.F("queued_at"))
    first_round = (
        ReviewItem.objects.filter(output=models.OuterRef("output"))
        .exclude(kind__in=FOLLOW_UPS)
        .order_by("queued_at", "id")
        .values("queued_at")[:1]
    )
    open_items.filter(kind__in=FOLLOW_UPS).update(
        turn_at=models.functions.Coalesce(models.Subquery(first_round), models.F("queued_at"))
    )


OPEN = models.Q(("state", "open"))
OPEN_ADJUDICATIONS = models.Q(("kind", "adjudication"), ("state", "open"))


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("gating", "0017_validators_scorer_label"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewitem",
            name="turn_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(give_open_items_their_turn, migrations.RunPython.noop),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="reviewitem",
            index=models.Index(condition=OPEN, fields=["turn_at", "id"], name="item_open_by_turn"),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="reviewitem",
            index=models.Index(
                condition=OPEN, fields=["task_type", "turn_at", "id"], name="item_open_task_by_turn"
            ),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="reviewitem",
            index=models.Index(
                condition=OPEN_ADJUDICATIONS,
                fields=["turn_at", "id"],
                name="item_open_adjud_by_turn",
            ),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="reviewitem",
            index=models.Index(
                condition=OPEN,
                fields=["-is_audit", "turn_at", "id"],
                name="item_open_audits_by_turn",
            ),
        ),
        RemoveIndexConcurrentlyOnPostgreSQL(model_name="reviewitem", name="item_open_by_age"),
        RemoveIndexConcurrentlyOnPostgreSQL(model_name="reviewitem", name="item_open_task_by_age"),
        RemoveIndexConcurrentlyOnPostgreSQL(model_name="reviewitem", name="item_open_adjudications"),
        RemoveIndexConcurrentlyOnPostgreSQL(model_name="reviewitem", name="item_open_audits_first"),
    ]
