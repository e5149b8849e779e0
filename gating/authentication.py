import threading

from cachetools import TTLCache
from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions

from gating.models import ApiToken
from gating.tokens import hash_token

# Token hash -> token with its user and the user's permissions loaded. Every request
# of a busy gateway would otherwise pay three queries before doing any work.
_tokens: TTLCache = TTLCache(maxsize=10_000, ttl=settings.TOKEN_CACHE_SECONDS)
_tokens_lock = threading.Lock()


def forget_tokens() -> None:
    """Drop this process's cached tokens, e.g. after revoking one."""
    with _tokens_lock:
        _tokens.clear()


def _active_token(key_hash: str) -> ApiToken | None:
    with _tokens_lock:
        token = _tokens.get(key_hash)
    if token is not None:
        return token
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=key_hash, revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    token.user.get_all_permissions()  # fills the user's permission cache once
    with _tokens_lock:
        _tokens[key_hash] = token
    _touch(token)
    return token


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>``, looked up by the token's sha256."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Malformed Authorization header: use 'Bearer <token>'."
            )
        try:
            raw = header[1].decode()
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid token.") from exc
        token = _active_token(hash_token(raw))
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


def _touch(token: ApiToken) -> None:
    # Written when the token is (re)loaded, so at most once per cache period per process:
    # last_used_at is for admins spotting unused tokens, not an audit trail.
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
