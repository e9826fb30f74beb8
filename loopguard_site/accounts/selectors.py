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


def api_tokens_of_user(user: AbstractBaseUser) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included."""
    return list(ApiToken.objects.filter(user=user))


def api_token_of_user(user: AbstractBaseUser, token_id: int) -> ApiToken | None:
    """The user's token `token_id`; None for another user's token or none."""
    return ApiToken.objects.filter(user=user, pk=token_id).first()
