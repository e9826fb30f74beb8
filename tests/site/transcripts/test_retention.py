"""`loopguard prune`: old sessions and everything stored about them go, in
batches; new, streaming and (with --keep-labelled) labelled ones stay; a dry
run deletes nothing and says the same. On PostgreSQL and on SQLite (the
embedded lab's database)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from detector.cli import main
from loopguard_site.replay.models import CheckpointEvaluation, Detection, SessionVerdict
from loopguard_site.replay.services import replay_session
from loopguard_site.review import retention
from loopguard_site.review.services import label_session_set
from loopguard_site.transcripts.models import Event, RawUpload, Session
from loopguard_site.transcripts.services import session_create_from_events

# A looping reasoning stream: its replay stores detections and checkpoint evaluations.
LOOP_EVENTS = [{"type": "turn"}] + [{"type": "reasoning", "text": "I will check the file again. "}] * 120
RAW = b'{"type": "turn"}\n'


def stored(title: str, *, days_old: int, state: str = Session.State.STORED, replayed: bool = True) -> Session:
    session = session_create_from_events(
        title=title, model="m", source_format="events", parser_version="1", events=LOOP_EVENTS, raw=RAW,
        filename=f"{title}.jsonl", state=state,
    )  # fmt: skip
    if replayed:
        replay_session(session=session, profile_name="seed000")
        replay_session(session=session, profile_name="default")
    Session.objects.filter(pk=session.pk).update(created=timezone.now() - timedelta(days=days_old))
    return session


def rows_of(session: Session) -> dict[str, int]:
    models = {
        "events": Event,
        "detections": Detection,
        "checkpoints": CheckpointEvaluation,
        "verdicts": SessionVerdict,
        "raw": RawUpload,
    }
    return {name: model.objects.filter(session_id=session.pk).count() for name, model in models.items()}


@pytest.fixture
def world(django_user_model):
    reviewer = django_user_model.objects.create_user("reviewer")
    sessions = {
        "old": stored("old", days_old=40),
        "older": stored("older", days_old=400),
        "labelled": stored("labelled", days_old=45),
        "live": stored("live", days_old=50, state=Session.State.LIVE, replayed=False),
        "new": stored("new", days_old=29),
    }
    label_session_set(session=sessions["labelled"], reviewer=reviewer, label="clean")
    return sessions


def remaining(world) -> list[str]:
    return sorted(name for name, session in world.items() if Session.objects.filter(pk=session.pk).exists())


@pytest.mark.django_db
def test_it_deletes_the_old_sessions_with_every_row_about_them_and_leaves_the_rest(database, world, capsys):
    kept_rows = {name: rows_of(world[name]) for name in ("live", "new")}
    old_ids = sorted(world[name].pk for name in ("old", "older", "labelled"))
    assert rows_of(world["old"])["detections"] > 0 and rows_of(world["old"])["checkpoints"] > 0

    status = main(["prune", "--older-than", "30d"])

    assert status == 0
    assert remaining(world) == ["live", "new"]
    for name in ("old", "older", "labelled"):
        assert set(rows_of(world[name]).values()) == {0}, name
    assert {name: rows_of(world[name]) for name in ("live", "new")} == kept_rows
    lines = capsys.readouterr().out.splitlines()
    events = 3 * len(LOOP_EVENTS)
    assert lines[1:] == [
        f"deleted 3 sessions (ids {old_ids[0]}–{old_ids[-1]}): {events:,} events, 3 raw uploads (51 bytes)",
        f"deleted 3 sessions in all: {events:,} events, 3 raw uploads (51 bytes)",
    ]
    assert lines[0].startswith("sessions created before ") and lines[0].endswith(" UTC")


@pytest.mark.django_db
def test_keep_labelled_keeps_the_labelled_ones(database, world, capsys):
    status = main(["prune", "--older-than", "30d", "--keep-labelled"])

    assert status == 0
    assert remaining(world) == ["labelled", "live", "new"]
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"deleted 2 sessions in all: {2 * len(LOOP_EVENTS):,} events, 2 raw uploads (34 bytes); kept 1 labelled"
    )


@pytest.mark.django_db
def test_a_dry_run_deletes_nothing_and_says_what_the_run_deletes(database, world, capsys, monkeypatch):
    monkeypatch.setattr(retention, "PRUNE_BATCH", 2)
    monkeypatch.setattr(retention, "ROW_DELETE_CHUNK", 7)  # events go in many statements
    before = {name: rows_of(session) for name, session in world.items()}

    dry = main(["prune", "--older-than", "30d", "--dry-run"])
    dry_lines = capsys.readouterr().out.splitlines()
    after_dry = {name: rows_of(session) for name, session in world.items()}
    real = main(["prune", "--older-than", "30d"])
    real_lines = capsys.readouterr().out.splitlines()

    assert (dry, real) == (0, 0)
    assert after_dry == before
    assert dry_lines[0].endswith(" UTC (dry run)")
    assert [line.replace("would delete", "deleted") for line in dry_lines[1:]] == real_lines[1:]
    assert len(real_lines) == 1 + 2 + 1  # two batches of at most 2, then the totals
    assert remaining(world) == ["live", "new"]


@pytest.mark.django_db
def test_without_an_age_it_uses_the_retention_setting_and_refuses_when_that_is_off(database, world, settings, capsys):
    settings.LOOPGUARD_RETENTION_DAYS = 0
    assert main(["prune"]) == 2
    assert capsys.readouterr().err == "loopguard prune: give --older-than AGE, or set LOOPGUARD_RETENTION_DAYS\n"
    assert len(remaining(world)) == 5

    settings.LOOPGUARD_RETENTION_DAYS = 100
    assert main(["prune"]) == 0
    assert remaining(world) == ["labelled", "live", "new", "old"]  # only the 400-day-old one


@pytest.mark.parametrize("bad", ["30", "30x", "0d", "d", "3.5d"])
def test_a_bad_age_is_refused_naming_it(bad, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["prune", "--older-than", bad])
    assert exit_.value.code == 2
    assert f"argument --older-than: {bad!r} is not an age" in capsys.readouterr().err


def test_ages_in_hours_days_and_weeks():
    from loopguard_site.cli.prune import age

    assert [age(text) for text in ("12h", "30d", "2w")] == [timedelta(hours=12), timedelta(days=30), timedelta(weeks=2)]
