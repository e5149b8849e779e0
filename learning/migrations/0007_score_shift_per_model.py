"""Score-shift alerts are measured per (task type, model) from now on, with subjects
"task type model". One measured per task type would never be measured again, and so would
never resolve: they are resolved here, and the next alerts cycle opens what still fires,
naming its model."""

from django.db import migrations
from django.utils import timezone


def resolve_per_task_type(apps, schema_editor):
    Alert = apps.get_model("learning", "Alert")
    Alert.objects.filter(rule="score_shift").exclude(state="resolved").update(
        state="resolved", resolved_at=timezone.now()
    )


class Migration(migrations.Migration):
    dependencies = [("learning", "0006_scoring_fault_alerts")]

    operations = [migrations.RunPython(resolve_per_task_type, migrations.RunPython.noop)]
