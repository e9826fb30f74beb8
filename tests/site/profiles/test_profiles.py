"""Stored profiles end to end: labelled corpus sessions, a tuning job, the
tuned profile saved as a version, exported, loaded by `detector`, imported
back; and the profiles API's shapes and errors."""

from __future__ import annotations

import json
import subprocess

import pytest

from detector.config import builtin_config, load_config
from detector.monitor import Monitor
from loopguard_site.accounts.models import Project
from loopguard_site.accounts.services import default_project
from loopguard_site.profiles.models import ProfileVersion, TuningJob
from loopguard_site.profiles.selectors import profiles_config
from loopguard_site.profiles.services import (
    profile_from_tuning,
    profiles_import,
    tuning_job_create,
    tuning_job_execute,
)
from loopguard_site.replay.selectors import replay_config
from loopguard_site.replay.services import replay_session
from loopguard_site.transcripts.models import Event
from tests.site.replay.conftest import LOOPGUARD, stored_detections
from tests.site.review.conftest import token_client

from .conftest import LOOSE_TOML, labelled_sessions


def tuned_version(reviewer) -> tuple[dict, TuningJob, ProfileVersion]:
    sessions = labelled_sessions(reviewer)
    (loose,) = profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="*", base_profile="loose")
    tuning_job_execute(job_id=job.pk)
    job.refresh_from_db()
    version = profile_from_tuning(job=job, name="loose", models=["gpt-4o*", "*kimi*"], user=reviewer)
    return sessions, job, version


@pytest.mark.django_db
def test_a_tuning_job_on_labelled_sessions_removes_the_false_positive(reviewer):
    sessions, job, version = tuned_version(reviewer)

    assert (job.state, job.sessions, job.error, job.done, job.total > 0) == ("done", 8, "", job.total, True)
    assert job.result["changes"] == [{"detector": "tool_dedup", "param": "min_occurrences", "before": 2, "after": 3}]
    normal, looping = sessions["tau-gpt4o-repeat-searches-later"], sessions["gh-kimicli-1950-reread-files"]
    changed = {s["session"]: (s["change"], s["held_out_change"]) for s in job.result["sessions"]}
    assert changed == {
        str(looping.pk): ("caught 1 tool call later", "caught 1 tool call later"),
        str(normal.pk): ("false positive removed", ""),
    }
    assert (job.result["before"]["false_positives"], job.result["after"]["false_positives"]) == (1, 0)
    assert (job.result["before"]["false_detections"], job.result["after"]["false_detections"]) == (4, 0)
    assert (job.result["before"]["recall"], job.result["after"]["recall"]) == (1.0, 1.0)
    # The only false positive is in one fold: the other folds cannot learn it, so held out nothing changes.
    assert job.result["held_out"]["after"] == job.result["before"]
    assert job.result["verdict"] == "no held-out gain"
    assert len(job.labels) == 8 and job.result["warnings"][0].startswith("only 3 labelled loop sessions")
    assert (version.name, version.version, version.tuning_job, version.created_by, version.origin) == (
        "loose",
        2,
        job,
        reviewer,
        "tuning",
    )
    assert version.table["tool_dedup"]["min_occurrences"] == 3
    # the detectors keep their order (the order they report in), whatever the database does with JSON
    assert list(version.table) == ["models", "description", "text_loop", "tool_repetition", "tool_dedup"]
    assert list(profiles_config(default_project().pk).select("loose").detectors) == [
        "text_loop",
        "tool_repetition",
        "tool_dedup",
    ]
    assert version.models == ["gpt-4o*", "*kimi*"]


@pytest.mark.parametrize("fmt", ["toml", "json"])
@pytest.mark.django_db
def test_the_export_loaded_by_detector_gives_the_detections_of_the_labs_replay(reviewer, fmt, tmp_path):
    sessions, _, version = tuned_version(reviewer)
    answer = token_client(reviewer).get(f"/api/profiles/export?format={fmt}")
    assert answer.status_code == 200
    path = tmp_path / f"profiles.{fmt}"
    path.write_bytes(answer.content)

    config = load_config(path)
    assert list(config.profiles)[0] == "loose"
    assert config.select(model="kimi-k2.6") == profiles_config(default_project().pk).select("loose")
    assert config.select("loose").version == version.version
    for session in sessions.values():
        replay_session(session=session, profile_name="loose", config=profiles_config(default_project().pk))
        monitor = Monitor("loose", config=config, model=session.model)
        found = []
        for data in Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True):
            found.extend(d.to_dict() for d in monitor.feed(data))
        assert found == stored_detections(session, "loose"), session.title
    assert stored_detections(sessions["tau-gpt4o-repeat-searches-later"], "loose") == []
    assert stored_detections(sessions["gh-kimicli-1950-reread-files"], "loose") != []


@pytest.mark.django_db
def test_the_export_imports_back_as_new_versions_with_the_same_tables(reviewer):
    _, _, tuned = tuned_version(reviewer)
    api = token_client(reviewer)
    exported = api.get("/api/profiles/export?format=toml").content

    answer = api.post("/api/profiles/import", exported, content_type="application/toml")

    assert answer.status_code == 201
    assert answer.json() == {"profiles": [{"name": "loose", "models": ["gpt-4o*", "*kimi*"], "version": 3}]}
    latest = ProfileVersion.objects.get(name="loose", version=3)
    assert (latest.table, latest.origin, latest.tuning_job) == (tuned.table, "import", None)
    assert api.get("/api/profiles").json() == {
        "profiles": [{"name": "loose", "models": ["gpt-4o*", "*kimi*"], "version": 3}]
    }
    assert api.get("/api/profiles/loose/diff?a=2&b=3").json() == {"name": "loose", "a": 2, "b": 3, "diff": []}
    diff = api.get("/api/profiles/loose/diff?a=1&b=2").json()["diff"]
    assert diff == [
        {"detector": "", "param": "models", "old": ["*"], "new": ["gpt-4o*", "*kimi*"]},
        {"detector": "", "param": "description", "old": None, "new": diff[1]["new"]},
        {"detector": "tool_dedup", "param": "min_occurrences", "old": 2, "new": 3},
    ]
    assert diff[1]["new"].startswith("tuned by job ")
    json_answer = api.post("/api/profiles/import?format=json", api.get("/api/profiles/export?format=json").content,
                           content_type="application/json")  # fmt: skip
    assert json_answer.json()["profiles"][0]["version"] == 4


@pytest.mark.parametrize(
    ("body", "query", "status", "error"),
    [
        (
            b"[profiles.x]\nmodels = 3\n",
            "",
            400,
            {"error": "import: profiles.x.models: expected a list of model-name globs"},
        ),
        (b'{"profiles": {"x": {"bogus": {}}}', "", 400, {"line": 1}),
        (b"[profiles.default.text_loop]\n", "", 400, {"field": "name"}),
        (b"", "", 400, {"error": "the file defines no profile"}),
        (b"[profiles.x]\n", "?format=yaml", 400, {"field": "format"}),
        (b"\xff\xfe", "", 400, {"error": "the file is not UTF-8 text"}),
    ],
)
@pytest.mark.django_db
def test_import_refuses_a_bad_file_and_stores_nothing(reviewer, body, query, status, error):
    answer = token_client(reviewer).post(f"/api/profiles/import{query}", body, content_type="application/toml")
    assert answer.status_code == status
    assert {k: answer.json()[k] for k in error} == error
    assert not ProfileVersion.objects.exists()


@pytest.mark.django_db
def test_profiles_api_errors(reviewer):
    api = token_client(reviewer)
    assert api.get("/api/profiles").json() == {"profiles": []}
    assert api.get("/api/profiles/export?format=xml").json()["field"] == "format"
    assert api.get("/api/profiles/export?format=json").content == b'{\n  "profiles": {}\n}\n'
    assert api.get("/api/profiles/nope/diff?a=1&b=2").status_code == 404
    bad = api.post("/api/tuning", {"model": "*", "profile": "nope"}, content_type="application/json")
    assert (bad.status_code, bad.json()["field"]) == (400, "profile")
    bad = api.post(
        "/api/tuning", {"model": "*", "profile": "default", "fp_budget": -1}, content_type="application/json"
    )
    assert bad.json()["field"] == "fp_budget"
    assert api.get("/api/tuning/999999").status_code == 404
    assert api.post("/api/profiles", {}, content_type="application/json").status_code == 405


@pytest.mark.django_db
def test_a_job_without_labelled_sessions_fails_with_the_reason(reviewer):
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="nothing*", base_profile="default")
    tuning_job_execute(job_id=job.pk)
    tuning_job_execute(job_id=job.pk)  # a second delivery finds it taken
    job.refresh_from_db()
    assert (job.state, job.error) == ("failed", "FieldError: no labelled session has a model matching 'nothing*'")
    answer = token_client(reviewer).post(f"/api/tuning/{job.pk}/save", {"name": "x"}, content_type="application/json")
    assert (answer.status_code, answer.json()["field"]) == (400, "job")


@pytest.mark.django_db
def test_loopguard_scan_reads_the_export_and_picks_the_stored_profile_by_model(reviewer, tmp_path):
    sessions, _, _ = tuned_version(reviewer)
    session = sessions["gh-kimicli-1950-reread-files"]
    config = tmp_path / "profiles.toml"
    config.write_bytes(token_client(reviewer).get("/api/profiles/export?format=toml").content)
    transcript = tmp_path / "session.jsonl"
    events = Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True)
    transcript.write_text("".join(json.dumps(data) + "\n" for data in events))
    replay_session(session=session, profile_name="loose", config=profiles_config(default_project().pk))

    result = subprocess.run(
        [str(LOOPGUARD), "scan", "--json", "--config", str(config), str(transcript)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert (report["profile"], report["model"]) == ("loose", session.model)
    assert report["detections"] == stored_detections(session, "loose") != []


@pytest.mark.django_db
def test_replays_run_the_profiles_stored_in_their_project_and_only_there(reviewer):
    """replay sits below profiles: it reads the stored profiles through the
    reader profiles hands it when the apps load."""
    project = default_project()
    other = Project.objects.create(name="elsewhere")
    profiles_import(text=LOOSE_TOML, project=project, user=reviewer)
    assert replay_config(project.pk) == profiles_config(project.pk)
    assert replay_config(project.pk).select(model="any-model").name == "loose"
    assert "loose" not in replay_config(other.pk).profiles
    assert list(replay_config(None).profiles) == list(builtin_config().profiles)
