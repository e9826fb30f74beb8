"""Login throttling: per account (whatever the address) and per address
(whatever the account), then refused with 429 even with the right password."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

PASSWORD = "a long enough password"


@pytest.fixture
def limits(settings):
    settings.LOOPGUARD_LOGIN_FAILURES_PER_ACCOUNT = 3
    settings.LOOPGUARD_LOGIN_FAILURES_PER_ADDRESS = 5
    settings.LOOPGUARD_LOGIN_LOCK_SECONDS = 600
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast: the test signs in often


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"  # the counters live in the shared cache


def address() -> str:
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


def login(username: str, password: str, remote: str) -> int:
    return Client().post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=remote)


@pytest.mark.django_db
def test_an_account_is_locked_after_its_failures_from_any_address(limits, django_user_model):
    name = unique("alice")
    django_user_model.objects.create_user(name, password=PASSWORD)
    statuses = [login(name, "wrong", address()).status_code for _ in range(3)]
    locked = login(name, PASSWORD, address())

    assert statuses == [200, 200, 200]  # the form again, with its error
    assert locked.status_code == 429 and 540 <= int(locked["Retry-After"]) <= 600
    assert b"Too many failed sign-ins for this account or from this address; try again in 10 min." in locked.content
    other = unique("bob")
    django_user_model.objects.create_user(other, password=PASSWORD)
    assert login(other, PASSWORD, address()).status_code == 302  # another account is not locked


@pytest.mark.django_db
def test_an_address_is_locked_after_its_failures_on_any_accounts(limits, django_user_model):
    remote = address()
    name = unique("carol")
    django_user_model.objects.create_user(name, password=PASSWORD)
    statuses = [login(unique("guess"), "wrong", remote).status_code for _ in range(5)]

    assert statuses == [200] * 5
    assert login(name, PASSWORD, remote).status_code == 429
    assert login(name, PASSWORD, address()).status_code == 302  # from elsewhere the account is fine


@pytest.mark.django_db
def test_a_successful_sign_in_clears_the_accounts_count(limits, django_user_model):
    name = unique("dave")
    django_user_model.objects.create_user(name, password=PASSWORD)
    for _ in range(2):
        login(name, "wrong", address())
    assert login(name, PASSWORD, address()).status_code == 302
    statuses = [login(name, "wrong", address()).status_code for _ in range(2)]
    assert statuses == [200, 200]
    assert login(name, PASSWORD, address()).status_code == 302
