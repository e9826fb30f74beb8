"""The profiles pages through the test client: list, versions with a diff,
the tuning form, and a finished job's result saved as a version."""

from __future__ import annotations

import re

import pytest

from loopguard_site.accounts.services import default_project
from loopguard_site.profiles.models import ProfileVersion, TuningJob
from loopguard_site.profiles.services import profiles_import, tuning_job_execute

from .conftest import LOOSE_TOML, labelled_sessions


@pytest.mark.django_db
def test_the_tuning_form_creates_a_job_and_its_page_shows_the_result_and_saves_it(client, reviewer):
    labelled_sessions(reviewer)
    profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    client.force_login(reviewer)
    assert "<option>loose</option>" in client.get("/profiles/tune").content.decode()

    refused = client.post("/profiles/tune", {"model": "*", "profile": "nope", "fp_budget": "0"})
    assert "unknown profile &#x27;nope&#x27;" in refused.content.decode()
    answer = client.post("/profiles/tune", {"model": "*", "profile": "loose", "fp_budget": "0"})
    job = TuningJob.objects.get()
    assert answer.url == f"/profiles/tuning/{job.pk}"
    assert 'data-state="queued"' in client.get(answer.url).content.decode()
    tuning_job_execute(job_id=job.pk)

    html = client.get(answer.url).content.decode()
    cells = re.findall(r"<tr><th>(before|after)</th>(.*?)</tr>", html)
    assert [(name, re.findall(r'<td class="num">([^<]*)</td>', row)) for name, row in cells] == [
        ("before", ["0.750", "1.000", "0.857", "2.0", "3/3", "1/5"]),
        ("after", ["1.000", "1.000", "1.000", "2.0", "3/3", "0/5"]),
    ]
    assert "<tr><td>tool_dedup</td><td>min_occurrences</td><td>2</td><td>3</td></tr>" in html
    assert "(normal): flagged → not flagged" in html

    saved = client.post(answer.url, {"name": "tools-tuned", "models": "gpt-4o*, *kimi*"})
    assert saved.url == "/profiles/tools-tuned/"
    version = ProfileVersion.objects.get(name="tools-tuned")
    assert (version.version, version.models, version.tuning_job) == (1, ["gpt-4o*", "*kimi*"], job)
    assert "&#x27;default&#x27; is a built-in profile" in client.post(answer.url, {"name": "default"}).content.decode()


@pytest.mark.django_db
def test_the_profile_page_compares_two_versions(client, reviewer):
    profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    profiles_import(
        project=default_project(), text=LOOSE_TOML.replace("min_occurrences = 2", "min_occurrences = 4"), user=reviewer
    )
    client.force_login(reviewer)
    listing = client.get("/profiles/").content.decode()
    assert '<a href="/profiles/loose/">loose</a></td><td>*</td><td class="num">2</td>' in listing
    html = client.get("/profiles/loose/?a=1&b=2").content.decode()
    assert "<tr><td>tool_dedup</td><td>min_occurrences</td><td>2</td><td>4</td></tr>" in html
    assert client.get("/profiles/nope/").status_code == 404
