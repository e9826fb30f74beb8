from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from .models import ApiToken
from .tokens import DISPLAY_LENGTH, new_token, token_hash


def api_token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """A new token for `user`; returns it with its plaintext, which is not
    stored anywhere and cannot be shown again."""
    plaintext = new_token()
    token = ApiToken.objects.create(
        user=user, name=name, token_hash=token_hash(plaintext), prefix=plaintext[:DISPLAY_LENGTH]
    )
    return token, plaintext


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke `token` (kept, for the record); a revoked token no longer authenticates."""
    ApiToken.objects.filter(pk=token.pk, revoked__isnull=True).update(revoked=timezone.now())
