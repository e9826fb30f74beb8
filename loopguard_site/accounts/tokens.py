"""The shape of an API token: `lg_` + 43 URL-safe characters (256 bits)."""

import hashlib
import secrets

TOKEN_PREFIX = "lg_"
DISPLAY_LENGTH = 10  # "lg_" and 7 characters: enough to tell tokens apart


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()
