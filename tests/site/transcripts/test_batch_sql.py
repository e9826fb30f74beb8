"""`transcripts.batch_sql`: the raw-SQL statements for many rows, on
PostgreSQL (the full mode) and SQLite (the embedded mode) alike."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from loopguard_site.transcripts.batch_sql import row_converter, rows_update
from loopguard_site.transcripts.models import Event, Session
from loopguard_site.transcripts.services import session_create_from_events

# Each test runs once per database: PostgreSQL in the full run, SQLite in the embedded one.
DATABASES = [
    pytest.param("postgresql", id="postgresql"),
    pytest.param("sqlite", id="sqlite", marks=pytest.mark.embedded),
]
pytestmark = [pytest.mark.parametrize("vendor", DATABASES), pytest.mark.django_db]

EVENTS = [{"type": "turn"}, {"type": "content", "text": "a"}, {"type": "content", "text": "b"}]


def _sessions(count: int) -> list[Session]:
    return [
        session_create_from_events(title=f"s{n}", model="m", source_format="events", parser_version="1", events=EVENTS)
        for n in range(count)
    ]


def test_it_saves_the_named_fields_of_each_row_its_own_values_and_nothing_else(vendor):
    assert connection.vendor == vendor
    first, second, untouched = _sessions(3)
    first.event_count, first.state, first.title = 7, Session.State.LOOPING, "not saved"
    second.event_count, second.state = 9, Session.State.CLOSED
    events = list(Event.objects.filter(session=first).order_by("seq"))
    events[1].data = {"type": "content", "text": 'é\n"quoted"'}
    events[2].data = {"type": "content", "text": "c", "t": 1.5}

    with CaptureQueriesContext(connection) as queries:
        rows_update(
            (Session, ["event_count", "state"], [first, second]),
            (Event, ["data"], events[1:]),
            (Event, ["type"], []),  # nothing to save: no statement
        )

    assert len(queries) == (1 if vendor == "postgresql" else 2)  # PostgreSQL: one round trip
    stored = {s.pk: s for s in Session.objects.filter(pk__in=[first.pk, second.pk, untouched.pk])}
    assert (stored[first.pk].event_count, stored[first.pk].state, stored[first.pk].title) == (7, "looping", "s0")
    assert (stored[second.pk].event_count, stored[second.pk].state) == (9, "closed")
    assert (stored[untouched.pk].event_count, stored[untouched.pk].state) == (3, "stored")
    assert list(Event.objects.filter(session=first).order_by("seq").values_list("data", flat=True)) == [
        {"type": "turn"},
        {"type": "content", "text": 'é\n"quoted"'},
        {"type": "content", "text": "c", "t": 1.5},
    ]
    assert list(Event.objects.filter(session=second).order_by("seq").values_list("data", flat=True)) == EVENTS


def test_raw_rows_convert_to_the_values_a_queryset_gives(vendor):
    assert connection.vendor == vendor
    [session] = _sessions(1)
    fields = [Session._meta.get_field(name) for name in ("created", "state", "event_count")]
    fields.append(Event._meta.get_field("data"))
    quote = connection.ops.quote_name
    sql = (
        f"SELECT s.{quote('created')}, s.{quote('state')}, s.{quote('event_count')}, e.{quote('data')}"
        f" FROM {quote(Session._meta.db_table)} s JOIN {quote(Event._meta.db_table)} e"
        f" ON e.{quote('session_id')} = s.{quote('id')} WHERE s.{quote('id')} = %s ORDER BY e.{quote('seq')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.pk])
        rows = cursor.fetchall()

    convert = row_converter(fields)
    assert [convert(row) for row in rows] == [[session.created, "stored", 3, event] for event in EVENTS]
