"""Which task types a gateway sees: those it has sent outputs of (a TaskTypeUse per pair,
recorded by the ingest from now on) and those an admin shares with every gateway.

The pairs of the outputs stored so far are read once, here, with the task types each
gateway created by naming them (a request that created one may have stored no output).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def record_uses(apps, schema_editor):
    Output = apps.get_model("gating", "Output")
    TaskTypeCreation = apps.get_model("gating", "TaskTypeCreation")
    TaskTypeUse = apps.get_model("gating", "TaskTypeUse")
    pairs = set(Output.objects.order_by().values_list("source_id", "task_type_id").distinct())
    pairs |= set(TaskTypeCreation.objects.values_list("gateway_id", "task_type_id"))
    TaskTypeUse.objects.bulk_create(
        [TaskTypeUse(gateway_id=g, task_type_id=t) for g, t in sorted(pairs)],
        batch_size=5000,
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("gating", "0020_scores_and_weights_on_scale"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="tasktype",
            name="shared",
            field=models.BooleanField(
                default=False,
                help_text="Every gateway sees it through the API. Otherwise a gateway sees "
                "only the task types it has sent outputs of.",
            ),
        ),
        migrations.CreateModel(
            name="TaskTypeUse",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "gateway",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="task_type_uses",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "task_type",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="uses",
                        to="gating.tasktype",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("gateway", "task_type"), name="task_type_use_unique"
                    )
                ],
            },
        ),
        migrations.RunPython(record_uses, migrations.RunPython.noop, elidable=True),
    ]
