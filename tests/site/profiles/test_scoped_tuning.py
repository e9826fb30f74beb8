"""Labels drive per-model tuning in the lab: false-positive labels on one
model's detections change that model's thresholds, and every other model
keeps its profile (in replays and in the live lab); a profile that loses held-out recall is not saved
without consent; a job can be cancelled."""

from __future__ import annotations

import pytest

from detector.config import get_profile
from detector.evaluation import read_corpus, row_events
from loopguard_site.accounts.services import default_project
from loopguard_site.errors import FieldError
from loopguard_site.live.services import live_ingest
from loopguard_site.profiles import services
from loopguard_site.profiles.models import TuningJob
from loopguard_site.profiles.selectors import profiles_config
from loopguard_site.profiles.services import (
    profile_from_tuning,
    profiles_import,
    tuning_job_cancel,
    tuning_job_create,
    tuning_job_execute,
)
from loopguard_site.replay.models import Detection
from loopguard_site.replay.services import replay_session
from loopguard_site.review.services import label_detection_set, label_session_set
from loopguard_site.transcripts.services import session_create_from_events, session_create_live
from tests.site.review.conftest import token_client
from tests.tuning_rows import agent_row, looping_row, two_model_rows, write_rows


def stored(rows_path) -> dict:
    """The rows as sessions, each scanned with `default`."""
    sessions = {}
    for row in read_corpus(rows_path):
        session = session_create_from_events(
            title=row.id, model=row.model, source_format="events", parser_version="", events=list(row_events(row))
        )
        replay_session(session=session, profile_name="default", config=profiles_config(default_project().pk))
        sessions[row.id] = session
    return sessions


def label_like_a_reviewer(sessions: dict, reviewer) -> None:
    """Each detection judged on its own: on a loop session the repetition of
    the read is a true loop and tool_dedup's early firing on the searches a
    false positive; on a clean agent every detection is a false positive;
    llama's clean agents (nothing fired) are marked clean."""
    for title, session in sessions.items():
        detections = Detection.objects.filter(session=session, profile="default").order_by("at", "id")
        for detection in detections:
            true = "-loop-" in title and detection.detector == "tool_repetition"
            label = "true_loop" if true else "false_positive"
            label_detection_set(detection=detection, reviewer=reviewer, label=label)
        if not detections:
            label_session_set(session=session, reviewer=reviewer, label="clean")


def scenario_rows() -> list[dict]:
    rows = two_model_rows()
    # a qwen3 loop session whose agent first searched three times: tool_dedup fires there, falsely
    mixed = looping_row("qwen3-8b-loop-after-searches", "qwen3-8b")
    mixed["text"] = agent_row("p", 3, "normal", "qwen3-8b")["text"] + "\n" + mixed["text"]
    return rows + [mixed]


@pytest.mark.django_db
def test_false_positives_on_one_models_detections_tune_that_model_and_leave_the_others(reviewer, tmp_path):
    sessions = stored(write_rows(tmp_path / "rows.jsonl", scenario_rows()))
    label_like_a_reviewer(sessions, reviewer)
    api = token_client(reviewer)
    created = api.post(
        "/api/tuning", {"model": ["qwen3-*"], "profile": "default", "folds": 3}, content_type="application/json"
    )
    assert created.status_code == 202
    tuning_job_execute(job_id=created.json()["id"])
    job = api.get(f"/api/tuning/{created.json()['id']}").json()

    assert (job["state"], job["sessions"], job["models"], job["folds"]) == ("done", 7, ["qwen3-*"], 3)
    result = job["result"]
    assert {"detector": "tool_dedup", "param": "min_occurrences", "before": 3, "after": 4} in result["changes"]
    assert (result["before"]["false_positives"], result["after"]["false_positives"]) == (3, 0)
    # the false positive on the loop session counts against tool_dedup although the session is a loop
    mixed = str(sessions["qwen3-8b-loop-after-searches"].pk)
    (row,) = [s for s in result["sessions"] if s["session"] == mixed]
    assert (row["base"]["false_detections"], row["tuned"]["false_detections"]) == (1, 0)
    assert row["base"]["flagged"] and row["tuned"]["flagged"]
    dedup = {r["type"]: r for r in result["detectors"]["before"] if r["detector"] == "tool_dedup"}
    assert dedup["duplicate_tool_call"]["false"] == 4
    assert result["held_out"]["folds"] == 3 and result["held_out"]["after"]["recall"] == 1.0
    assert result["verdict"] == "improves"
    assert job["labels"] > 0

    saved = api.post(f"/api/tuning/{job['id']}/save", {"name": "qwen3-tuned"}, content_type="application/json")
    assert (saved.status_code, saved.json()) == (201, {"name": "qwen3-tuned", "models": ["qwen3-*"], "version": 1})
    config = profiles_config(default_project().pk)
    assert config.select(model="qwen3-8b").name == "qwen3-tuned"
    assert config.select(model="qwen3-8b").detectors["tool_dedup"].min_occurrences == 4
    assert config.select(model="llama-3-8b") == get_profile("default")  # unchanged
    assert config.select(model="gemini-2.5-preview") == get_profile("preview")
    # its page and export say where it came from
    version = TuningJob.objects.get(pk=job["id"]).profileversion_set.get()
    assert version.table["description"] == (
        f"tuned by job {job['id']} from default on 7 labelled sessions ({job['labels']} labels)"
    )
    exported = api.get("/api/profiles/qwen3-tuned/export?format=toml").content.decode()
    assert exported.startswith('[profiles.qwen3-tuned]\nmodels = ["qwen3-*"]\n')


@pytest.mark.django_db
def test_a_profile_that_loses_held_out_recall_is_saved_only_with_consent(reviewer, tmp_path):
    # The hand-computed case of tests/detector/test_tuning.py, labelled in the lab.
    rows = [agent_row(f"L{i}", n, "loop", "m") for i, n in enumerate((5, 3, 4, 5), 1)]
    rows += [agent_row(f"N{i}", n, "normal", "m") for i, n in enumerate((3, 2, 3, 1), 1)]
    sessions = stored(write_rows(tmp_path / "rows.jsonl", rows))
    for title, session in sessions.items():
        if title.startswith("L"):
            label_session_set(session=session, reviewer=reviewer, label="missed_loop", channel="tools", start=0, end=2)
        else:
            label_session_set(session=session, reviewer=reviewer, label="clean")
    profiles_import(project=default_project(), text="[profiles.dedup]\n[profiles.dedup.tool_dedup]\n", user=reviewer)
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="m", base_profile="dedup", folds=2)
    tuning_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert job.result["verdict"] == "loses_recall"
    assert (job.result["held_out"]["after"]["recall"], job.result["held_out"]["before"]["recall"]) == (0.75, 1.0)

    with pytest.raises(FieldError, match="catches fewer loops than the base on held-out sessions") as refused:
        profile_from_tuning(job=job, name="dedup", models=None, user=reviewer)
    assert refused.value.field == "accept_recall_loss"
    version = profile_from_tuning(job=job, name="dedup", models=None, user=reviewer, accept_recall_loss=True)
    assert (version.version, version.models) == (2, ["m"])


@pytest.mark.django_db
def test_a_running_job_is_cancelled_at_its_next_check(reviewer, tmp_path, monkeypatch):
    sessions = stored(write_rows(tmp_path / "rows.jsonl", two_model_rows()))
    label_like_a_reviewer(sessions, reviewer)
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="*", base_profile="default")
    sent = []
    real_send = services.send_tuning_progress

    def send_and_cancel_at_ten(progress_job: TuningJob) -> None:
        sent.append((progress_job.state, progress_job.done))
        real_send(progress_job)
        if progress_job.done == 10:  # the reviewer presses Cancel while it runs
            tuning_job_cancel(job=progress_job)

    monkeypatch.setattr(services, "send_tuning_progress", send_and_cancel_at_ten)
    tuning_job_execute(job_id=job.pk)
    job.refresh_from_db()
    assert (job.state, job.result, job.done) == ("cancelled", None, 10)
    assert sent[-2:] == [("running", 10), ("cancelled", 10)]  # the cancel's own message, and nothing after it
    page = token_client(reviewer).post(f"/api/tuning/{job.pk}/cancel")
    assert page.json()["state"] == "cancelled"


@pytest.mark.django_db
def test_tuning_api_checks_its_fields(reviewer):
    api = token_client(reviewer)
    for body, field in [
        ({"model": "", "profile": "default"}, "model"),
        ({"model": ["a,b"], "profile": "default"}, "model"),
        ({"model": "*", "profile": "default", "folds": 1}, "folds"),
        ({"model": "*", "profile": "default", "folds": 11}, "folds"),
        ({"model": "*", "profile": "default", "max_evaluations": 0}, "max_evaluations"),
        ({"model": "*", "profile": "default", "time_limit": "soon"}, "time_limit"),
    ]:
        answer = api.post("/api/tuning", body, content_type="application/json")
        assert (answer.status_code, answer.json()["field"]) == (400, field), body
    assert not TuningJob.objects.exists()
    job = tuning_job_create(project=default_project(), user=reviewer, model_glob="a, b*", base_profile="default")
    assert job.globs == ["a", "b*"]
    assert api.post(f"/api/tuning/{job.pk}/cancel").json()["state"] == "cancelled"
    tuning_job_execute(job_id=job.pk)  # a cancelled job is never claimed
    job.refresh_from_db()
    assert (job.state, job.started) == ("cancelled", None)


@pytest.mark.django_db
def test_the_live_lab_selects_a_stored_profile_by_its_model_glob_only(reviewer):
    profiles_import(
        project=default_project(),
        text='[profiles.qwen3-tuned]\nextends = "default"\nmodels = ["qwen3-*"]\n'
        "[profiles.qwen3-tuned.tool_dedup]\nmin_occurrences = 4\n",
        user=reviewer,
    )
    qwen = session_create_live(model="qwen3-8b", uploader=reviewer, project=default_project())
    llama = session_create_live(model="llama-3-8b", uploader=reviewer, project=default_project())
    searches = [{"type": "tool_call", "name": "search", "args": {"q": "x"}}, {"type": "tool_call", "name": "ls"}] * 3
    for session in (qwen, llama):
        live_ingest(session_id=session.pk, seq=1, events=[{"type": "turn"}, *searches])
        session.refresh_from_db()
    assert (qwen.profile, llama.profile) == ("qwen3-tuned", "default")
    # the third search is a duplicate for default, not yet for the tuned profile
    fired = {s: set(Detection.objects.filter(session=s).values_list("profile", "detector")) for s in (qwen, llama)}
    assert ("default", "tool_dedup") in fired[llama] and {p for p, _ in fired[llama]} == {"default"}
    assert {p for p, _ in fired[qwen]} == {"qwen3-tuned"} and ("qwen3-tuned", "tool_dedup") not in fired[qwen]
