"""On PostgreSQL the audit log refuses UPDATE and DELETE at the database too, so that no
code path, raw SQL or admin action can rewrite history."""

from django.db import migrations

CREATE = """
CREATE FUNCTION gating_audit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'gating_auditevent is append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER gating_audit_append_only
    BEFORE UPDATE OR DELETE ON gating_auditevent
    FOR EACH ROW EXECUTE FUNCTION gating_audit_append_only();
"""
DROP = """
DROP TRIGGER IF EXISTS gating_audit_append_only ON gating_auditevent;
DROP FUNCTION IF EXISTS gating_audit_append_only();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("gating", "0002_review_queue_audit_webhooks")]

    operations = [migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP))]
