"""warn_until_certified becomes approve_requires: on was "certified", off "nothing"; new task
types get "estimate" (docs/gate.md)."""

from django.db import migrations, models


def from_switch(apps, schema_editor):
    TaskType = apps.get_model("gating", "TaskType")
    TaskType.objects.filter(warn_until_certified=True).update(approve_requires="certified")
    TaskType.objects.filter(warn_until_certified=False).update(approve_requires="nothing")


def to_switch(apps, schema_editor):
    TaskType = apps.get_model("gating", "TaskType")
    TaskType.objects.update(warn_until_certified=True)
    TaskType.objects.filter(approve_requires="nothing").update(warn_until_certified=False)


class Migration(migrations.Migration):
    dependencies = [
        ("gating", "0025_draws_by_time"),
    ]

    operations = [
        migrations.AddField(
            model_name="tasktype",
            name="approve_requires",
            field=models.CharField(
                choices=[("certified", "certified"), ("estimate", "estimate"), ("nothing", "nothing")],
                default="estimate",
                help_text="What must stand behind the approve threshold for what reaches it to be approved: 'certified', 'estimate' (certified; until then, approved from the estimated approve line, where the label model's estimates are within budget with a margin) or 'nothing'. Short of it, what reaches the threshold is delivered as a warning (docs/gate.md).",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="tasktype",
            name="estimated_approve_threshold",
            field=models.FloatField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(from_switch, to_switch),
        migrations.RemoveField(model_name="tasktype", name="warn_until_certified"),
        migrations.AlterField(
            model_name="tasktype",
            name="approve_guarantee",
            field=models.CharField(
                choices=[("certified", "certified"), ("estimated", "estimated"), ("none", "none")],
                default="none",
                editable=False,
                max_length=20,
            ),
        ),
        migrations.AlterField(
            model_name="output",
            name="approve_guarantee",
            field=models.CharField(
                choices=[("certified", "certified"), ("estimated", "estimated"), ("none", "none")],
                default="none",
                max_length=20,
            ),
        ),
    ]
