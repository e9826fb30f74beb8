from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from .models import ApiToken
from .tokens import TOKEN_PREFIX, token_hash


def api_token_user(plaintext: str) -> AbstractBaseUser | None:
    """The active user a live (not revoked) token belongs to, else None."""
    if not plaintext.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=token_hash(plaintext), revoked__isnull=True, user__is_active=True)
        .first()
    )
    return token.user if token else None
