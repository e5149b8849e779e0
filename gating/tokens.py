"""API tokens: random, shown once, stored as sha256.

A fast hash suffices because tokens carry 256 bits of randomness; a slow password hash
would only slow every request.
"""

import hashlib
import secrets

TOKEN_PREFIX = "gh_"


def generate_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()
