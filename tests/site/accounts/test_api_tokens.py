from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth import get_user_model

from loopguard_site.accounts.auth import bearer_token, scope_token
from loopguard_site.accounts.models import ApiToken
from loopguard_site.accounts.selectors import api_token_user
from loopguard_site.accounts.services import api_token_revoke
from tests.members import member, project_token


@pytest.fixture
def owner(db):
    return member(get_user_model().objects.create_user("owner"))


def test_it_stores_only_the_hash_and_a_display_prefix(owner):
    token, plaintext = project_token(user=owner, name="ci")

    stored = ApiToken.objects.get()
    assert stored == token
    assert stored.token_hash == hashlib.sha256(plaintext.encode()).hexdigest()
    assert stored.prefix == plaintext[:10]
    assert plaintext.startswith("lg_") and len(plaintext) == 46
    assert plaintext not in {stored.token_hash, stored.prefix, stored.name}


def test_it_resolves_a_token_to_its_user(owner):
    _, plaintext = project_token(user=owner, name="ci")

    assert api_token_user(plaintext) == owner


@pytest.mark.parametrize("plaintext", ["", "lg_", "lg_unknown", "not-a-token"])
def test_it_resolves_an_unknown_token_to_nobody(owner, plaintext):
    project_token(user=owner, name="ci")

    assert api_token_user(plaintext) is None


def test_a_revoked_token_no_longer_authenticates(owner):
    token, plaintext = project_token(user=owner, name="ci")
    api_token_revoke(token=token)

    assert api_token_user(plaintext) is None
    assert ApiToken.objects.get().revoked is not None


def test_the_token_of_an_inactive_user_does_not_authenticate(owner):
    _, plaintext = project_token(user=owner, name="ci")
    owner.is_active = False
    owner.save()

    assert api_token_user(plaintext) is None


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer lg_abc", "lg_abc"),
        ("bearer   lg_abc ", "lg_abc"),
        ("Basic dXNlcjpwYXNz", None),
        ("Bearer ", None),
        ("", None),
        (None, None),
    ],
)
def test_it_reads_a_bearer_header(header, token):
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    ("scope", "token"),
    [
        ({"headers": [(b"authorization", b"Bearer lg_header")], "query_string": b"token=lg_query"}, "lg_header"),
        ({"headers": [(b"origin", b"http://127.0.0.1")], "query_string": b"a=1&token=lg_query"}, "lg_query"),
        ({"headers": [], "query_string": b""}, None),
        ({}, None),
    ],
)
def test_it_reads_the_token_of_a_websocket_scope(scope, token):
    assert scope_token(scope) == token
