"""Tokens are shown once, stored only as a hash, and revocable; users get their role."""

import hashlib
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from gating import services
from gating.models import ApiToken
from gating.roles import Role


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


@pytest.mark.django_db
def test_create_user_and_token_then_use_it():
    run("create_user", "gw", "--role", "gateway")
    raw = run("create_api_token", "gw")

    token = ApiToken.objects.get()
    assert token.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in {token.key_hash, token.prefix, token.name}
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/ping/").status_code == 200


@pytest.mark.django_db
def test_revoked_token_is_401():
    run("create_user", "gw", "--role", "gateway")
    raw = run("create_api_token", "gw")
    ApiToken.objects.update(revoked_at=timezone.now())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.get("/api/v1/ping/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Token abc", "Bearer \xff"])
def test_malformed_authorization_is_401(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert client.get("/api/v1/ping/").status_code == 401


@pytest.mark.django_db
def test_roles_and_passwords():
    run("create_user", "alice", "--role", "admin", "--password", "s3cret-pass")
    alice = get_user_model().objects.get(username="alice")
    assert alice.is_staff and alice.check_password("s3cret-pass")
    assert alice.has_perm("gating.change_tasktype")
    with pytest.raises(CommandError, match="already exists"):
        run("create_user", "alice", "--role", "reviewer")
    with pytest.raises(CommandError, match="No user"):
        run("create_api_token", "nobody")


@pytest.mark.django_db
def test_a_token_cannot_be_moved_to_another_account_in_the_admin(client, user_in):
    superuser = user_in(Role.ADMIN, is_superuser=True, is_staff=True)
    gateway, admin = user_in(Role.GATEWAY), user_in(Role.ADMIN)
    token, _ = services.api_token_create(user=gateway, name="prod")
    client.force_login(superuser)

    response = client.post(
        f"/admin/gating/apitoken/{token.pk}/change/",
        {"user": admin.pk, "name": "prod", "revoked_at_0": "", "revoked_at_1": ""},
    )

    assert response.status_code == 302
    token.refresh_from_db()
    assert token.user == gateway
