"""The profiles tests' world: corpus rows (fixtures/corpus) as labelled
sessions, and a deliberately loose base profile that flags one of them."""

from __future__ import annotations

import pytest

from detector.evaluation import CorpusRow, loop_start_position, read_corpus, row_events
from detector.tuning import LabelledStream
from loopguard_site.review.services import label_session_set
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_from_events
from tests.members import member
from tests.shared_paths import shared_path

ROW_IDS = (
    "gh-kimicode-640-readmediafile-x4",  # loop, tools
    "gh-kimicli-1950-reread-files",  # loop, tools
    "gh-vllm-25977-qwen3-boxed",  # loop, reasoning
    "tau-gpt4o-fanout-reservations",
    "tau-gpt4o-fanout-flight-search",
    "tau-gpt4o-payment-retries",
    "tau-gpt4o-repeat-searches-later",  # normal; tool_dedup with min_occurrences 2 flags it
    "r1m-r1-1776-zh-plants",
)
# tool_dedup at 2 occurrences calls a normal agent's repeated search a loop.
LOOSE_TOML = """\
[profiles.loose]
models = ["*"]
[profiles.loose.text_loop]
[profiles.loose.tool_repetition]
consecutive_threshold = 2
[profiles.loose.tool_dedup]
min_occurrences = 2
"""


def corpus_rows() -> list[CorpusRow]:
    rows = {row.id: row for row in read_corpus(shared_path("corpus", "real_small.jsonl"))}
    return [rows[row_id] for row_id in ROW_IDS]


def row_channel(row: CorpusRow) -> str:
    return "tools" if row.channel == "tool_calls" else row.channel


def corpus_streams() -> list[LabelledStream]:
    """The rows as the tuner's streams, labelled as the corpus labels them."""
    return [
        LabelledStream(
            key=row.id,
            label=row.label,
            events=list(row_events(row)),
            model=row.model,
            loop_starts={row_channel(row): loop_start_position(row)} if row.label == "loop" else {},
        )
        for row in corpus_rows()
    ]


def store_row(row: CorpusRow) -> Session:
    return session_create_from_events(
        title=row.id, model=row.model, source_format="events", parser_version="", events=list(row_events(row))
    )


def labelled_sessions(reviewer) -> dict:
    """Every fixture row stored as a session and labelled as the corpus labels it."""
    sessions = {}
    for row in corpus_rows():
        session = sessions[row.id] = store_row(row)
        if row.label == "normal":
            label_session_set(session=session, reviewer=reviewer, label="clean")
            continue
        channel = row_channel(row)
        events = Event.objects.filter(session=session)
        length = events.filter(type="tool_call").count() if channel == "tools" else len(row.text)
        label_session_set(
            session=session, reviewer=reviewer, label="missed_loop", channel=channel,
            start=loop_start_position(row), end=length,
        )  # fmt: skip
    return sessions


@pytest.fixture
def reviewer(django_user_model):
    return member(django_user_model.objects.create_user("ann"))
