"""The live tests' small world: a producer (owner of the live sessions, with
an API token), an outsider, a real looping stream from the shared corpus cut
into 4-character deltas, and helpers that drive the real ASGI application."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from detector.monitor import Monitor
from loopguard_site.accounts.models import Role
from loopguard_site.asgi import application
from loopguard_site.transcripts.models import Session
from loopguard_site.transcripts.services import session_create_live
from tests.browser import chromium_driver, daphne_live_server  # noqa: F401 (fixtures)
from tests.lab_server import lab  # noqa: F401 (fixture)
from tests.members import member, project_token
from tests.shared_paths import shared_path
from tests.sockets import connect_refused  # noqa: F401 (the live tests import it from here)

TIMEOUT = 10  # seconds a socket may take to answer before the test fails
LOOP_ROW = "ae-qwen15-1.8b-agile-numbered"  # "4. Agile\n5. Agile\n...", Qwen1.5-1.8B-Chat


def corpus_row(row_id: str) -> dict:
    with shared_path("corpus", "real_small.jsonl").open(encoding="utf-8") as rows:
        return next(row for row in map(json.loads, rows) if row["id"] == row_id)


def deltas(kind: str, text: str, size: int = 4) -> list[dict]:
    return [{"type": kind, "text": text[i : i + size]} for i in range(0, len(text), size)]


@pytest.fixture(scope="session")
def loop_events() -> list[dict]:
    """The row's stream as a producer would send it: a turn, then 4-character
    content deltas."""
    row = corpus_row(LOOP_ROW)
    return [{"type": "turn"}, *deltas(row["channel"], row["text"])]


@dataclass(frozen=True)
class FirstDetection:
    seq: int  # the event (numbered from 1) whose feed fired it
    detection: dict  # as Detection.to_dict() gives it


@pytest.fixture(scope="session")
def loop_stop(loop_events) -> FirstDetection:
    """What the live session's profile (default) finds first in the stream fed
    whole to a Monitor, the reference the live paths must equal: a stop."""
    monitor = Monitor("default", model="Qwen1.5-1.8B-Chat")
    seq, first = next((n, d) for n, event in enumerate(loop_events, 1) for d in monitor.feed(event))
    assert (first.detector, first.action, first.unit) == ("text_loop", "stop", "4. Agile\n")
    assert 20 < seq < len(loop_events) - 20, "the tests cut the stream around the stop"
    return FirstDetection(seq, first.to_dict())


@dataclass
class Account:
    user: object
    token: str

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        return [(b"authorization", f"Bearer {self.token}".encode())]

    def client(self) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {self.token}")


def account(django_user_model, name: str) -> Account:
    """A reviewer of the project "default" (who may stream into the sessions
    they create, not into others') with a token."""
    user = member(django_user_model.objects.create_user(name), Role.REVIEWER)
    return Account(user, project_token(user=user, name="tests")[1])


@pytest.fixture
def producer(django_user_model) -> Account:
    return account(django_user_model, "producer")


@pytest.fixture
def outsider(django_user_model) -> Account:
    return account(django_user_model, "outsider")


@pytest.fixture
def live_session(producer) -> Session:
    return session_create_live(model="Qwen1.5-1.8B-Chat", uploader=producer.user)


def ingest_socket(session: Session, who: Account) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, f"/ws/ingest/{session.pk}", headers=who.headers)


def viewer_socket(session: Session, who: Account) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, f"/ws/sessions/{session.pk}", headers=who.headers)


async def connected(socket: WebsocketCommunicator) -> dict:
    """Connect, and the server's first message (`resume`, or a viewer's state)."""
    outcome = await socket.connect(timeout=TIMEOUT)
    assert outcome == (True, None), outcome
    return await socket.receive_json_from(timeout=TIMEOUT)


async def receive(socket: WebsocketCommunicator, count: int) -> list[dict]:
    """The next `count` messages (each within TIMEOUT), and any more the
    socket was already sent, so that a test comparing the list sees extras."""
    messages = [await socket.receive_json_from(timeout=TIMEOUT) for _ in range(count)]
    while not await socket.receive_nothing(timeout=0.1):
        messages.append(await socket.receive_json_from(timeout=TIMEOUT))
    return messages
