from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from gating import services
from gating.roles import Role


class Command(BaseCommand):
    help = "Create a user with one role: gateway, reviewer, lead or admin."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=[r.value for r in Role])
        parser.add_argument(
            "--password",
            help="Password for the web UI; leave out for a gateway user, which uses tokens.",
        )

    def handle(self, *args, username, role, password, **options):
        if get_user_model().objects.filter(username=username).exists():
            raise CommandError(f"A user named {username!r} already exists.")
        services.user_create(username=username, role=Role(role), password=password)
        self.stdout.write(self.style.SUCCESS(f"Created {role} user {username!r}."))
