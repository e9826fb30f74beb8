"""The API token page: a new token is shown once and stored hashed; a
revoked token no longer authenticates; nobody revokes another's token."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from loopguard_site.accounts.models import ApiToken, Project
from loopguard_site.accounts.tokens import token_hash
from tests.members import member, project_token

PLAINTEXT = re.compile(r'<pre class="token-plaintext">(lg_[A-Za-z0-9_-]{43})</pre>')


@pytest.fixture
def alice(django_user_model):
    return member(django_user_model.objects.create_user("alice"))


@pytest.fixture
def browser(client, alice):
    client.force_login(alice)
    return client


@pytest.mark.django_db
def test_it_shows_a_new_token_once_and_stores_only_its_hash(browser, alice):
    created = browser.post("/accounts/tokens/", {"name": "ci <producer>"})
    (plaintext,) = PLAINTEXT.findall(created.content.decode())
    token = ApiToken.objects.get(user=alice)

    assert (token.name, token.token_hash, token.prefix) == ("ci <producer>", token_hash(plaintext), plaintext[:10])
    assert "ci &lt;producer&gt;" in created.content.decode()
    listed = browser.get("/accounts/tokens/").content.decode()
    assert plaintext not in listed and f"<code>{plaintext[:10]}…</code>" in listed
    assert Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}").get("/api/sessions").status_code == 200


@pytest.mark.django_db
def test_it_refuses_a_nameless_token(browser, alice):
    response = browser.post("/accounts/tokens/", {"name": "  "})
    assert response.status_code == 400
    assert "give the token a name of 1 to 100 characters" in response.content.decode()
    assert not ApiToken.objects.filter(user=alice).exists()


@pytest.mark.django_db
def test_a_revoked_token_no_longer_authenticates(browser, alice):
    token, plaintext = project_token(user=alice, name="old")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert api.get("/api/sessions").status_code == 200

    response = browser.post(f"/accounts/tokens/{token.pk}/revoke")

    assert (response.status_code, response["Location"]) == (302, "/accounts/tokens/")
    assert api.get("/api/sessions").status_code == 401
    assert "revoked" in browser.get("/accounts/tokens/").content.decode()


@pytest.mark.django_db
def test_nobody_revokes_a_token_of_a_project_they_do_not_administer(browser, alice, django_user_model):
    bobs = Project.objects.create(name="bobs")
    bob = member(django_user_model.objects.create_user("bob"), project=bobs)
    token, plaintext = project_token(user=bob, name="bob's", project=bobs)

    project_token(user=alice, name="alice's")  # a token the page does list, named the same way

    assert browser.post(f"/accounts/tokens/{token.pk}/revoke").status_code == 404
    page = browser.get("/accounts/tokens/").content.decode()
    # Django's escaping writes ' as &#x27;: a listed name appears in that form only.
    assert page.count("<td>alice&#x27;s</td>") == 1
    assert "bob&#x27;s" not in page and "bob's" not in page
    assert Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}").get("/api/sessions").status_code == 200
