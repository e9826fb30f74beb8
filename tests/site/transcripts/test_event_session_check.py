"""Events always name a session that exists. On PostgreSQL a statement-level
trigger checks the sessions an insert names, once per statement (migration
transcripts 0007), in place of the per-row foreign key; on SQLite the plain
foreign key stays. Here: events for a missing session fail and write
nothing; a session's delete takes its events, and a delete that would leave
events behind fails; a delete and an insert that meet in two transactions
(one holding the lock, the other seen waiting for it) end as the foreign
key ended them (tests/transactions_meet.py)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from loopguard_site.transcripts.batch_sql import rows_update
from loopguard_site.transcripts.event_rows import event_json, numbered_events_insert, numbered_events_statements
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_from_events
from tests.transactions_meet import transactions_meet

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS = [{"type": "content", "text": f"chunk {n}"} for n in range(3)]


def rows(session_id: int, events: list[dict] = EVENTS) -> list[tuple[int, int, str, str]]:
    return [(session_id, seq, event["type"], event_json(event)) for seq, event in enumerate(events, start=1)]


FIRST = {"type": "content", "text": "first"}


def a_session() -> Session:
    """A session of one event, with no raw upload (nothing else names it)."""
    return session_create_from_events(title="s", model="", source_format="events", parser_version="x", events=[FIRST])


def stored(session_id: int) -> list[tuple[int, dict]]:
    return list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("seq", "data"))


def test_events_naming_a_missing_session_fail_and_write_nothing(database):
    session = a_session()
    missing = session.pk + 1000
    before = stored(session.pk)

    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        numbered_events_insert([(session.pk, seq + 10, kind, text) for _, seq, kind, text in rows(session.pk)])
        numbered_events_insert(rows(missing))

    if connection.vendor == "postgresql":
        assert str(caught.value).splitlines()[0] == f"events name session {missing}, which does not exist"
    else:
        assert str(caught.value) == "FOREIGN KEY constraint failed"
    assert stored(session.pk) == before
    assert Event.objects.filter(session_id=missing).count() == 0


def test_one_statement_naming_a_missing_session_among_others_fails_naming_it(live_services):
    first, second = a_session(), a_session()
    missing = second.pk + 1000

    later = [(session_id, seq + 1, kind, text) for session_id, seq, kind, text in [*rows(first.pk), *rows(second.pk)]]

    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        numbered_events_insert([*rows(missing + 1), *later[:3], *rows(missing), *later[3:]])

    assert str(caught.value).splitlines()[0] == f"events name session {missing}, which does not exist"
    assert Event.objects.count() == 2  # the two sessions' first events only


def test_an_insert_statement_naming_a_missing_session_among_others_fails_naming_it(live_services):
    first, second = a_session(), a_session()
    missing = second.pk + 1000
    later = [(session_id, seq + 1, kind, text) for session_id, seq, kind, text in [*rows(first.pk), *rows(second.pk)]]

    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        rows_update(before=numbered_events_statements([*later[:3], *rows(missing), *later[3:]]))

    assert str(caught.value).splitlines()[0] == f"events name session {missing}, which does not exist"
    assert Event.objects.count() == 2  # the two sessions' first events only


def test_a_session_deleted_takes_its_events(database):
    kept, deleted = a_session(), a_session()

    Session.objects.filter(pk=deleted.pk).delete()

    assert Event.objects.filter(session_id=deleted.pk).count() == 0
    assert stored(kept.pk) == [(1, FIRST)]


def test_a_session_deleted_while_events_still_name_it_fails_at_commit(database):
    session = a_session()
    table = Session._meta.db_table

    with pytest.raises(IntegrityError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE id = %s", [session.pk])

    if connection.vendor == "postgresql":
        assert str(caught.value).splitlines()[0] == f"session {session.pk} is deleted while events still name it"
    else:
        assert str(caught.value) == "FOREIGN KEY constraint failed"
    assert Session.objects.filter(pk=session.pk).exists()
    assert stored(session.pk) == [(1, FIRST)]


def test_an_insert_that_waited_for_a_delete_of_its_session_fails_and_writes_nothing(live_services):
    session = a_session()

    _, outcome = transactions_meet(
        lambda: Session.objects.filter(pk=session.pk).delete(),
        # seq from 2: no key of the deleted event 1, whose delete the insert would wait for
        lambda: numbered_events_insert([(session.pk, seq + 1, kind, text) for _, seq, kind, text in rows(0)]),
        "COPY %",
    )

    assert isinstance(outcome, IntegrityError)
    assert str(outcome).splitlines()[0] == f"events name session {session.pk}, which does not exist"
    assert not Session.objects.filter(pk=session.pk).exists()
    assert Event.objects.filter(session_id=session.pk).count() == 0


def test_a_delete_that_waited_for_an_insert_into_its_session_fails_and_leaves_both(live_services):
    session = a_session()
    later = [{"type": "content", "text": f"later {n}"} for n in range(3)]

    _, outcome = transactions_meet(
        lambda: numbered_events_insert([(session.pk, seq + 1, kind, text) for _, seq, kind, text in rows(0, later)]),
        lambda: Session.objects.filter(pk=session.pk).delete(),
        'DELETE FROM "transcripts_session"%',
    )

    assert isinstance(outcome, IntegrityError)
    assert str(outcome).splitlines()[0] == f"session {session.pk} is deleted while events still name it"
    assert Session.objects.filter(pk=session.pk).exists()
    assert [seq for seq, _ in stored(session.pk)] == [1, 2, 3, 4]
