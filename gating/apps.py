from django.apps import AppConfig


class GatingConfig(AppConfig):
    name = "gating"
    verbose_name = "Gate and review"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        import gating.api.schema  # noqa: F401  (registers the OpenAPI auth extension)
        from gating.roles import ensure_roles
        from gating.users import access_audit_connect

        # Roles are groups whose permissions exist only after migrate has created them, and
        # they include other apps' permissions (learning, beat): refresh after every app.
        post_migrate.connect(ensure_roles, dispatch_uid="gating.ensure_roles")
        # Every change of a user's access goes to the audit log, whatever door it came
        # through: the receivers see the admin, the services and a shell alike.
        access_audit_connect()
        # Once per process: each gunicorn worker and Celery process builds its own
        # exporter thread, which a fork would not carry over.
        from gating.tracing import tracing_configure

        tracing_configure()
