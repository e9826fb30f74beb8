from django.db import migrations

# On PostgreSQL the events' foreign key to their session is checked once per
# statement instead of once per row. The per-row check of the deferred
# foreign key cost as much of the server's CPU as the COPY of an import
# itself (BENCHMARKS.md section 3); one statement-level trigger reads the
# statement's rows as a transition table and checks each session they name
# once. The guarantees are the foreign key's:
#
# - events naming a session that does not exist fail (SQLSTATE 23503, an
#   IntegrityError) and nothing of the statement is written;
# - the sessions named are locked FOR KEY SHARE, as the foreign key's check
#   locks them: a session being deleted is waited for, and one deleted
#   meanwhile is found missing;
# - a session deleted (or its id changed) while events still name it fails
#   at commit, as the deferred NO ACTION of the foreign key did (Django
#   deletes a session's events itself, first).
#
# SQLite (the embedded lab) keeps its plain foreign key: the model still
# declares it, and nothing here runs there.
TRIGGERS = r"""
DO $$
DECLARE name text;
BEGIN
  FOR name IN SELECT conname FROM pg_constraint
      WHERE conrelid = 'transcripts_event'::regclass AND confrelid = 'transcripts_session'::regclass
        AND contype = 'f' LOOP
    EXECUTE format('ALTER TABLE transcripts_event DROP CONSTRAINT %I', name);
  END LOOP;
END $$;

CREATE FUNCTION transcripts_event_sessions_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  named bigint[];
  locked bigint;
  missing bigint;
BEGIN
  -- one pass over the statement's rows
  SELECT array_agg(n.session_id) INTO named FROM (SELECT DISTINCT session_id FROM new_events) n;
  -- in key order, as every writer locks sessions: two never wait for each other in a circle
  SELECT count(*) INTO locked FROM (
    SELECT s.id FROM transcripts_session s WHERE s.id = ANY(named) ORDER BY s.id FOR KEY SHARE OF s) l;
  IF locked < cardinality(named) THEN
    SELECT min(n) INTO missing FROM unnest(named) n
      WHERE NOT EXISTS (SELECT 1 FROM transcripts_session s WHERE s.id = n);
    RAISE EXCEPTION 'events name session %, which does not exist', missing
      USING ERRCODE = 'foreign_key_violation', TABLE = 'transcripts_event', COLUMN = 'session_id';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER transcripts_event_sessions_inserted AFTER INSERT ON transcripts_event
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION transcripts_event_sessions_check();
CREATE TRIGGER transcripts_event_sessions_updated AFTER UPDATE ON transcripts_event
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION transcripts_event_sessions_check();

CREATE FUNCTION transcripts_session_events_left() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM transcripts_event WHERE session_id = OLD.id) THEN
    RAISE EXCEPTION 'session % is deleted while events still name it', OLD.id
      USING ERRCODE = 'foreign_key_violation', TABLE = 'transcripts_event', COLUMN = 'session_id';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER transcripts_session_events_left AFTER DELETE OR UPDATE OF id ON transcripts_session
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION transcripts_session_events_left();
"""

DROP = """
DROP TRIGGER transcripts_event_sessions_inserted ON transcripts_event;
DROP TRIGGER transcripts_event_sessions_updated ON transcripts_event;
DROP TRIGGER transcripts_session_events_left ON transcripts_session;
DROP FUNCTION transcripts_event_sessions_check(), transcripts_session_events_left();
ALTER TABLE transcripts_event ADD CONSTRAINT transcripts_event_session_id_fk_transcripts_session_id
  FOREIGN KEY (session_id) REFERENCES transcripts_session (id) DEFERRABLE INITIALLY DEFERRED;
"""


def statement_check_create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(TRIGGERS, params=None)


def statement_check_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("transcripts", "0006_event_session_no_own_index"),
    ]

    operations = [migrations.RunPython(statement_check_create, statement_check_drop)]
