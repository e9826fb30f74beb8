"""A stored profile must run in the lab as live sessions keep their Monitor
(pickled between messages): one whose Monitor cannot be kept is refused with
an error naming the detector, and nothing is stored."""

from __future__ import annotations

import pytest

from detector import Monitor
from loopguard_site.profiles.models import ProfileVersion
from loopguard_site.replay import monitors
from tests.site.review.conftest import token_client

JUDGED = b"""\
[profiles.judged]
models = ["*"]
[profiles.judged.llm_judge]
base_url = "http://127.0.0.1:9/v1"
model = "judge"
"""


def import_judged(reviewer):
    return token_client(reviewer).post("/api/profiles/import", JUDGED, content_type="application/toml")


@pytest.mark.django_db
def test_a_judged_profile_with_the_labs_http_client_is_stored(reviewer):
    answer = import_judged(reviewer)
    assert answer.status_code == 201
    assert ProfileVersion.objects.get().name == "judged"


@pytest.mark.django_db
def test_a_profile_whose_monitor_does_not_pickle_is_refused_naming_the_detector(reviewer, monkeypatch):
    def local_client(payload: dict) -> dict:
        return {}

    def monitor_with_a_local_client(profile, *, model=""):
        return Monitor(profile, model=model, judge_client=local_client)

    monkeypatch.setattr(monitors, "profile_monitor", monitor_with_a_local_client)
    answer = import_judged(reviewer)
    assert answer.status_code == 400
    body = answer.json()
    assert body["field"] == "profile"
    assert body["error"].startswith(
        "profile 'judged': llm_judge: this detector's state cannot be kept between live messages (it does not pickle: "
    )
    assert not ProfileVersion.objects.exists()


@pytest.mark.django_db
def test_a_judged_profile_whose_key_variable_is_unset_here_is_refused(reviewer, monkeypatch):
    monkeypatch.delenv("LOOPGUARD_TEST_UNSET_KEY", raising=False)
    text = JUDGED + b'api_key_env = "LOOPGUARD_TEST_UNSET_KEY"\n'
    answer = token_client(reviewer).post("/api/profiles/import", text, content_type="application/toml")
    assert answer.status_code == 400
    assert answer.json()["error"] == (
        "profile 'judged': llm_judge.api_key_env: the environment variable LOOPGUARD_TEST_UNSET_KEY is not set"
    )
    assert not ProfileVersion.objects.exists()
