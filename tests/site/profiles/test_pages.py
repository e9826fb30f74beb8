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
    table = html[html.index('id="tuning-table"') : html.index("</table>", html.index('id="tuning-table"'))]
    cells = re.findall(r"<tr><th>([^<]+)</th>(.*?)</tr>", table)
    base = ["0.750 [0.30–0.95]", "1.000 [0.44–1.00]", "2.0", "3/3", "1/5", "4"]
    assert [(name, [re.sub(r"<[^>]+>", "", c) for c in re.findall(r'<td class="num">(.*?)</td>', row)])
            for name, row in cells] == [
        ("Base, in-sample", base),
        ("Tuned, in-sample", ["1.000 [0.44–1.00]", "1.000 [0.44–1.00]", "2.0", "3/3", "0/5", "0"]),
        ("Base, held-out", base),
        ("Tuned, held-out", base),
    ]  # fmt: skip
    assert "<tr><td>tool_dedup</td><td>min_occurrences</td><td>2</td><td>3</td></tr>" in html
    assert "no gain on held-out sessions" in html
    assert html.count("read them with their intervals") == 2  # 3 loop and 5 clean sessions: below 10 each
    assert re.search(
        r'<span class="badge badge-clean">clean</span></td>\s*<td>—</td><td>false positive removed</td>', html
    )

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
    assert '<tr><td><a href="/profiles/loose/">loose</a></td><td><code>*</code></td>' in listing
    assert re.search(r'<td class="num">2</td>', listing)
    # The built-in profiles are listed too, each with what it watches and its parameters.
    for name in ("default", "seed000", "gemini", "preview"):
        assert f'<a href="/profiles/{name}/">{name}</a> <span class="badge badge-muted">built-in</span>' in listing
    assert '<td><code>min_occurrences</code></td><td class="value"><code>4</code></td>' in listing  # loose v2
    html = client.get("/profiles/loose/?a=1&b=2").content.decode()
    assert '<tr><td>tool_dedup</td><td>min_occurrences</td><td class="old">2</td><td class="new">4</td></tr>' in html
    by_default = client.get("/profiles/loose/").content.decode()  # the two newest are compared at once
    assert by_default.count("checked>") == 2 and '<td class="old">2</td><td class="new">4</td>' in by_default
    assert html.count('<details class="version-params"') == 2  # every version's parameters
    builtin = client.get("/profiles/preview/").content.decode()
    assert "default with seed 004&#x27;s strict tool counting for preview models" in builtin
    assert "<code>*preview*</code>" in builtin
    assert "Tool-call repetition (seeds 002 and 004): the same call again and again." in builtin
    assert client.get("/profiles/nope/").status_code == 404


@pytest.mark.django_db
def test_the_profiles_page_imports_a_config_file(client, reviewer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(reviewer)
    upload = SimpleUploadedFile("qwen3.toml", LOOSE_TOML.encode(), content_type="application/toml")
    answer = client.post("/profiles/", {"file": upload})
    assert answer.url == "/profiles/loose/"
    assert ProfileVersion.objects.get().origin == "import"
    bad = SimpleUploadedFile("bad.toml", b"[profiles.x]\nmodels = 3\n", content_type="application/toml")
    html = client.post("/profiles/", {"file": bad}).content.decode()
    assert "bad.toml: profiles.x.models: expected a list of model-name globs" in html
    assert ProfileVersion.objects.count() == 1
