"""The Content-Security-Policy header, CSRF on forms, and `manage.py check
--deploy` with a production environment."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from loopguard_site.accounts.csp import POLICY
from tests.members import member
from tests.shared_paths import REPO_ROOT

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "x7#kQ9v!mZ2@pL4$wR8^tN6&yB1*cD3(eF5)gH0_jK-sU+iO=aP",
    "ALLOWED_HOSTS": "lab.example.org",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SECURE": "true",
}


def test_every_response_carries_the_policy(client, db):
    for path in ("/accounts/login/", "/", "/sessions/", "/api/sessions", "/no-such-page"):
        assert client.get(path)["Content-Security-Policy"] == POLICY, path


@pytest.mark.django_db
def test_a_form_post_without_its_csrf_token_is_refused(django_user_model):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(member(django_user_model.objects.create_user("alice")))
    assert browser.post("/review/adjudicate", {"detection": "1", "label": "true_loop"}).status_code == 403
    assert browser.post("/upload/", {"format": "auto"}).status_code == 403
    assert browser.post("/accounts/logout/").status_code == 403


def test_check_deploy_passes_with_the_production_environment(tmp_path):
    env = {**os.environ, **PRODUCTION, "LOOPGUARD_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (result.returncode, result.stdout.strip()) == (0, "System check identified no issues (0 silenced)."), (
        result.stderr
    )


def test_check_deploy_fails_with_the_lab_defaults(tmp_path):
    env = {**os.environ, **PRODUCTION, "LOOPGUARD_DATA_DIR": str(tmp_path)}
    del env["SECURE_HSTS_SECONDS"], env["SESSION_COOKIE_SECURE"]
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    assert "security.W004" in result.stderr and "security.W012" in result.stderr
