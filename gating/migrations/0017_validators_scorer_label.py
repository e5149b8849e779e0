"""Outputs recorded "adr0003-v1" before scorers had names: the same model, now
"validators-v1" beside the evidence scorers.

Apart from 0016, whose columns are added under a short lock: this touches every output row,
and in the same transaction as ALTER TABLE it would hold the table's lock throughout.
"""

from django.db import migrations


def _name_the_validators_scorer(apps, schema_editor):
    Output = apps.get_model("gating", "Output")
    Output.objects.filter(scorer="adr0003-v1").update(scorer="validators-v1")


def _back(apps, schema_editor):
    Output = apps.get_model("gating", "Output")
    Output.objects.filter(scorer="validators-v1").update(scorer="adr0003-v1")


class Migration(migrations.Migration):
    dependencies = [
        ("gating", "0016_scorers_and_shadow_scores"),
    ]

    operations = [
        migrations.RunPython(_name_the_validators_scorer, _back),
    ]
