"""A tuning job through a real Celery worker process on Redis and
PostgreSQL (full mode), its progress watched over a real WebSocket."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from loopguard_site.accounts.services import default_project
from loopguard_site.asgi import application
from loopguard_site.celery import app
from loopguard_site.jobs import FINISHED_STATES
from loopguard_site.profiles.models import TuningJob
from loopguard_site.profiles.services import profiles_import
from tests.members import project_token
from tests.site.review.conftest import token_client
from tests.sockets import connect_refused

from .conftest import LOOSE_TOML, labelled_sessions


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_tunes_and_progress_arrives_over_the_websocket(celery_worker_process, reviewer, monkeypatch):
    worker = celery_worker_process
    sessions = labelled_sessions(reviewer)
    profiles_import(project=default_project(), text=LOOSE_TOML, user=reviewer)
    monkeypatch.setitem(app.conf, "task_default_queue", worker.queue)
    api = token_client(reviewer)
    created = api.post("/api/tuning", {"model": "*", "profile": "loose"}, content_type="application/json")
    assert created.status_code == 202
    job_id = created.json()["id"]
    assert created.json() == {"id": job_id, "state": "queued"}
    _, token = project_token(user=reviewer, name="socket")

    async def watch() -> list[dict]:
        socket = WebsocketCommunicator(
            application, f"/ws/tuning/{job_id}", headers=[(b"authorization", f"Bearer {token}".encode())]
        )
        assert await socket.connect(timeout=10) == (True, None)
        messages = [await socket.receive_json_from(timeout=10)]
        worker.start()  # only now: the first message is the snapshot of a queued job
        while messages[-1]["state"] not in FINISHED_STATES:
            messages.append(await socket.receive_json_from(timeout=120))
        await socket.disconnect()
        return messages

    messages = async_to_sync(watch)()
    status = worker.stop()

    job = api.get(f"/api/tuning/{job_id}").json()
    assert (job["state"], job["sessions"], job["error"]) == ("done", 8, ""), worker.log.read_text()
    assert job["result"]["changes"] == [{"detector": "tool_dedup", "param": "min_occurrences", "before": 2, "after": 3}]
    normal = sessions["tau-gpt4o-repeat-searches-later"]
    assert [s["change"] for s in job["result"]["sessions"] if s["session"] == str(normal.pk)] == [
        "false positive removed"
    ]
    evaluations = job["result"]["evaluations"]
    assert messages[:2] == [
        {"id": job_id, "state": "queued", "done": 0, "total": 0},
        {"id": job_id, "state": "running", "done": 0, "total": 0},
    ]
    assert messages[-1] == {"id": job_id, "state": "done", "done": evaluations, "total": evaluations}
    running = messages[2:-1]
    assert [m["done"] for m in running] == list(range(5, 5 * len(running) + 1, 5))
    assert len({m["total"] for m in running}) == 1 and running[0]["total"] >= evaluations
    assert (job["done"], job["total"]) == (evaluations, evaluations)
    assert status == 0, worker.log.read_text()

    saved = api.post(f"/api/tuning/{job_id}/save", {"name": "tuned"}, content_type="application/json")
    assert (saved.status_code, saved.json()) == (201, {"name": "tuned", "models": ["*"], "version": 1})


@pytest.mark.parametrize(
    ("path", "authorised", "refusal"),
    [
        ("/ws/tuning/JOB", False, 4401),
        ("/ws/tuning/JOB?token=lg_not-a-token", False, 4401),
        ("/ws/tuning/999999", True, 4404),
    ],
)
@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_socket_without_a_token_or_for_an_unknown_job(live_services, reviewer, path, authorised, refusal):
    job = TuningJob.objects.create(project=default_project(), model_glob="*", base_profile="default")
    _, token = project_token(user=reviewer, name="test")
    headers = [(b"authorization", f"Bearer {token}".encode())] if authorised else []

    async def scenario() -> tuple:
        socket = WebsocketCommunicator(application, path.replace("JOB", str(job.pk)), headers=headers)
        return await connect_refused(socket)

    assert async_to_sync(scenario)() == (True, refusal)
