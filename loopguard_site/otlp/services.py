"""OpenTelemetry traces as live sessions: the spans of one trace (per
project) go into one live session, through the live app's one ingest
(`live_ingest_batch`), so detections fire, are stored and reach the
session's viewers as for a producer socket.

Spans become events with the otel importer's own reader (`SpanReader`:
GenAI semantic conventions, OpenInference, OpenLLMetry, Vercel AI SDK), so a
trace sent live gives the events its file gives when imported. An export
holds the spans that ended since the last one, a trace's spans may come in
several exports: each export's spans of a trace are fed in start order after
those already stored, and the reader's state between exports (the tool calls
LLM spans reported and no tool span answered yet) and the time origin of
the events' `t` are kept in `TraceSession`. The trace's session is created
by its first export (its detector profile follows the model of the first LLM
span in it) and closed by the export that holds its root span (the one
without a parent: it ends last); spans of a closed trace are refused.
Exports of one trace are serialized by a row lock on its `TraceSession`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial

from django.db import IntegrityError, transaction

from detector.importers import Source, TranscriptBuilder
from detector.importers.otel import NAME, VERSION, SpanReader, by_start, llm_model
from loopguard_site.accounts.models import Project
from loopguard_site.errors import FieldError
from loopguard_site.live.messages import send_to_viewers
from loopguard_site.live.protocol import MAX_EVENTS_PER_MESSAGE, parse_message
from loopguard_site.live.selectors import acked_seq
from loopguard_site.live.services import IngestRequest, live_ingest_batch, live_session_close
from loopguard_site.transcripts.services import session_create_live

from .models import TraceSession


@dataclass
class TraceOutcome:
    """What one export did to one trace: its session (None if refused
    before one existed), the spans it refused and why, the detections the
    spans fired (as the live sockets send them) and the session's state."""

    trace_id: str
    session: int | None
    spans: int
    rejected: int = 0
    error: str | None = None
    state: str | None = None
    detections: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "trace_id": self.trace_id,
            "session": self.session,
            "spans": self.spans,
            "rejected": self.rejected,
            "error": self.error,
            "state": self.state,
            "detections": self.detections,
        }


def traces_ingest(*, user, project: Project, spans: list[dict]) -> list[TraceOutcome]:
    """Store the spans of an export (as `document_spans` gives them),
    trace by trace in the order their first span comes; one outcome each."""
    by_trace: dict[str, list[dict]] = defaultdict(list)
    for span in spans:
        by_trace[span["trace"]].append(span)
    return [_trace_ingest(user, project, trace_id, by_start(spans)) for trace_id, spans in by_trace.items()]


def _trace_ingest(user, project: Project, trace_id: str, spans: list[dict]) -> TraceOutcome:
    outcome = TraceOutcome(trace_id=trace_id, session=None, spans=len(spans))
    if not trace_id:
        outcome.rejected, outcome.error = len(spans), "a span without a traceId"
        return outcome
    viewer_texts: list[str] = []
    try:
        with transaction.atomic():
            model = next(filter(None, map(llm_model, spans)), "")
            trace = _trace_locked(user, project, trace_id, model)
            events = _trace_events(trace, spans)
            closes = any(span["root"] for span in spans)
            requests = _requests(trace.session_id, events, closes)
            for result in live_ingest_batch(requests):
                if isinstance(result, FieldError):
                    raise result
                outcome.detections += result.detections
                outcome.state = result.state
                viewer_texts += result.viewer_texts
            if closes and not requests:
                outcome.state = live_session_close(session_id=trace.session_id).state
            trace.save(update_fields=["origin", "unanswered"])
            if viewer_texts:
                transaction.on_commit(partial(send_to_viewers, trace.session_id, viewer_texts))
        outcome.session = trace.session_id
    except FieldError as exc:  # the session is closed (or gone), or the trace's text cannot be stored
        outcome.rejected, outcome.error, outcome.detections, outcome.state = len(spans), str(exc), [], None
        stored = TraceSession.objects.filter(project=project, trace_id=trace_id).values_list("session_id", flat=True)
        outcome.session = stored.first()  # None when this export was to create it
    return outcome


def _trace_locked(user, project: Project, trace_id: str, model: str) -> TraceSession:
    """The trace's row, locked until the transaction ends; created with its
    live session if this is its first export."""
    trace = TraceSession.objects.select_for_update().filter(project=project, trace_id=trace_id).first()
    if trace is not None:
        return trace
    try:
        with transaction.atomic():
            session = session_create_live(model=model, title=f"trace {trace_id}", uploader=user, project=project)
            return TraceSession.objects.create(project=project, trace_id=trace_id, session=session)
    except IntegrityError:  # another export of the trace created it meanwhile
        return TraceSession.objects.select_for_update().get(project=project, trace_id=trace_id)


def _trace_events(trace: TraceSession, spans: list[dict]) -> list[dict]:
    """The events of `spans` after those of the trace's earlier exports;
    updates the reader's state and time origin kept in `trace`."""
    builder = TranscriptBuilder(Source(f"trace {trace.trace_id}", ""), NAME, VERSION)
    reader = SpanReader(builder, trace.unanswered)
    for span in spans:
        reader.feed(span)
    times = [event["t"] for event in builder.events if "t" in event]
    if trace.origin is None and times:
        trace.origin = min(times)
    for event in builder.events:
        if "t" in event:
            event["t"] = round(event["t"] - trace.origin, 6)
    trace.unanswered = reader.unanswered
    return builder.events


def _requests(session_id: int, events: list[dict], close: bool) -> list[IngestRequest]:
    """The events as producer messages (checked as a socket's are), the last
    one closing the session when the trace ended."""
    first = acked_seq(session_id) + 1
    chunks = [events[start : start + MAX_EVENTS_PER_MESSAGE] for start in range(0, len(events), MAX_EVENTS_PER_MESSAGE)]
    requests = []
    for number, chunk in enumerate(chunks):
        last = number == len(chunks) - 1
        message = parse_message({"seq": first + number, "events": chunk, "close": close and last})
        requests.append(
            IngestRequest(
                session_id=session_id, seq=message.seq, events=message.events, close=message.close, texts=message.texts
            )
        )
    return requests
