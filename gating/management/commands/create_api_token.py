from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from gating import services


class Command(BaseCommand):
    help = "Create an API token for a user and print it once; only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label to tell tokens apart.")

    def handle(self, *args, username, name, **options):
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"No user named {username!r}.") from exc
        _, raw = services.api_token_create(user=user, name=name)
        self.stderr.write("Store this token now; it cannot be shown again.")
        self.stdout.write(raw)
