"""Validators' weights within 0-100, and every stored score a number on the 0-10 scale.

Before the checks are added, rows that an earlier version let through are mended: a weight
above 100 (or NaN, which PostgreSQL sorts above every number) is set to 100, and an output
whose score or base score was not a number on the scale is given the score a scoring fault
gets today, 0, with a reason that says so. Its decision is history and stays as it was;
impacts stored without a number of points (a NaN written as null) get 0 and say why. Such
rows are few, so they are mended one by one.
"""

import django.core.validators
from django.db import migrations, models
from django.db.models import Q

NOT_ON_SCALE = Q(score__gt=10) | Q(score__lt=0) | Q(base_score__gt=10) | Q(base_score__lt=0)
MENDED = (
    "Stored before scores were checked: the score was not a number on 0-10 (a scoring "
    "fault), so it is shown as 0."
)


def mend(apps, schema_editor):
    Validator = apps.get_model("gating", "Validator")
    Output = apps.get_model("gating", "Output")
    ReviewItem = apps.get_model("gating", "ReviewItem")
    Validator.objects.filter(weight__gt=100).update(weight=100.0)
    Validator.objects.filter(weight__lt=0).update(weight=0.0)
    for output in Output.objects.filter(NOT_ON_SCALE).iterator():
        output.score = output.base_score = 0.0
        output.impacts = [
            impact
            if isinstance(impact.get("points"), int | float)
            else {**impact, "points": 0.0, "detail": f"{impact.get('detail', '')} (not a number)"}
            for impact in output.impacts
        ]
        output.reasons = [*output.reasons, MENDED]
        output.save(update_fields=["score", "base_score", "impacts", "reasons"])
    ReviewItem.objects.filter(Q(score__gt=10) | Q(score__lt=0)).update(score=0.0)


class Migration(migrations.Migration):
    dependencies = [
        ("gating", "0019_audit_alert_and_fault_actions"),
    ]

    operations = [
        migrations.RunPython(mend, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="validator",
            name="weight",
            field=models.FloatField(
                default=1.0,
                validators=[
                    django.core.validators.MinValueValidator(0.0),
                    django.core.validators.MaxValueValidator(100.0),
                ],
            ),
        ),
        migrations.AddConstraint(
            model_name="output",
            constraint=models.CheckConstraint(
                condition=Q(score__gte=0, score__lte=10, base_score__gte=0, base_score__lte=10),
                name="output_scores_on_scale",
            ),
        ),
        migrations.AddConstraint(
            model_name="validator",
            constraint=models.CheckConstraint(
                condition=Q(weight__gte=0.0, weight__lte=100.0),
                name="validator_weight_in_range",
            ),
        ),
    ]
