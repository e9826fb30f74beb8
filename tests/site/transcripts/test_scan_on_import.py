"""Every imported session is scanned at once, in the background, with the
profile its model selects: one replay job per profile, enqueued when the
import commits; its verdict then reaches the session API."""

from __future__ import annotations

import json

import pytest

from loopguard_site.replay.models import ReplayJob, SessionVerdict
from loopguard_site.replay.services import queued_runs_execute_here
from loopguard_site.transcripts.models import Session
from tests.shared_paths import REPO_ROOT

MODEL = "kimi-k2.6 thinking (via opencode go plan)"  # the demo file's
TOOLS = (REPO_ROOT / "fixtures/demo/loop-tools-readmediafile.jsonl").read_bytes()


def with_model(raw: bytes, model: str) -> bytes:
    lines = raw.decode().splitlines()
    header = json.loads(lines[0])
    header["model"] = model
    return "\n".join([json.dumps(header), *lines[1:]]).encode()


@pytest.mark.django_db
def test_an_api_import_is_scanned_with_the_profile_its_model_selects(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as enqueued:
        answer = api.post("/api/sessions?filename=a.jsonl", TOOLS, content_type="application/octet-stream")
        answer = api.post(
            "/api/sessions?filename=b.jsonl", with_model(TOOLS, "gemini-3-pro-preview"),
            content_type="application/octet-stream",
        )  # fmt: skip
    assert answer.status_code == 201, answer.content

    plain, preview = Session.objects.order_by("id")
    assert (plain.profile, preview.profile) == ("default", "preview")
    jobs = ReplayJob.objects.order_by("id")
    assert [(job.profiles, list(job.runs.values_list("session_id", flat=True))) for job in jobs] == [
        (["default"], [plain.pk]),
        (["preview"], [preview.pk]),
    ]
    assert len(enqueued) == 2  # each job's dispatcher, sent once its import committed
    assert not SessionVerdict.objects.exists()

    queued_runs_execute_here(session_ids=[plain.pk, preview.pk])  # what the workers do with those tasks

    body = api.get(f"/api/sessions/{preview.pk}").json()
    verdict = SessionVerdict.objects.get(session=preview)
    assert body["profile"] == "preview"
    assert body["verdicts"] == [
        {
            "profile": "preview",
            "verdict": "loop",
            "detections": verdict.detection_count,
            "first_detection": {
                "id": verdict.first_detection_id,
                "detector": verdict.first_detection_detector,
                "type": verdict.first_detection_type,
                "channel": "tools",
                "start": verdict.first_detection_start,
                "at": verdict.first_detection_at,
            },
        }
    ]
    assert verdict.detection_count > 0
    assert set(ReplayJob.objects.values_list("state", flat=True)) == {"done"}


@pytest.mark.django_db
def test_a_failed_file_starts_no_scan(api):
    bad = b'{"type": "nope"}\n'
    answer = api.post("/api/sessions?filename=bad.jsonl", bad, content_type="application/octet-stream")
    assert answer.status_code == 400
    assert not ReplayJob.objects.exists()


@pytest.mark.embedded
@pytest.mark.django_db
def test_the_embedded_import_command_scans_what_it_imported(tmp_path, capsys):
    from detector.cli import main

    (tmp_path / "tools.jsonl").write_bytes(TOOLS)
    (tmp_path / "preview.jsonl").write_bytes(with_model(TOOLS, "gemini-3-pro-preview"))

    assert main(["import", str(tmp_path)]) == 0

    # No worker would take the scans (the embedded broker lives in the lab's process): the command ran them.
    verdicts = SessionVerdict.objects.order_by("session_id").values_list("session__model", "profile", "looped")
    assert list(verdicts) == [("gemini-3-pro-preview", "preview", True), (MODEL, "default", True)]
    assert set(ReplayJob.objects.values_list("state", flat=True)) == {"done"}
    assert len(capsys.readouterr().out.splitlines()) == 2
