"""This process's Monitors of live sessions, and how a writer gets the
current one.

The Monitor stays in the memory of the process that stores the session's
messages (`monitors`), stamped with the `LiveStream.revision` its last
write stored: a process uses its own only if the stored stamp still
matches, under the session's row lock; otherwise (another process wrote
meanwhile, or this one never had it) it unpickles the one stored in
`LiveStream` and feeds it the events stored after it, which is what the
offline Monitor would have seen.
"""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Iterable

from detector import Config, Monitor
from loopguard_site.replay.monitors import profile_monitor
from loopguard_site.replay.selectors import replay_config
from loopguard_site.transcripts.models import Event, Session

from .models import LiveStream

REPLAY_CHUNK = 2000  # events read per round trip when a Monitor catches up
MONITORS_KEPT = 1000  # Monitors a process keeps in memory (the least recently used go first)


class MonitorCache:
    """Monitors by session id, each with the revision it was current at. A
    Monitor is taken out while a transaction feeds it and put back only once
    that transaction committed: a rolled-back batch leaves none half-fed
    behind."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[int, tuple[int, Monitor]] = OrderedDict()
        self._lock = threading.Lock()  # the ingest worker, the sweeper and HTTP requests share it

    def take(self, session_id: int, revision: int) -> Monitor | None:
        with self._lock:
            entry = self._entries.pop(session_id, None)
        return entry[1] if entry is not None and entry[0] == revision else None

    def held(self, revisions: Iterable[tuple[int, int]]) -> set[int]:
        """Of (session id, revision) pairs, the sessions whose Monitor `take` would give now."""
        with self._lock:
            entries = self._entries
            return {session_id for session_id, revision in revisions if entries.get(session_id, (None,))[0] == revision}

    def put(self, session_id: int, revision: int, monitor: Monitor) -> None:
        self.put_many([(session_id, revision, monitor)])

    def put_many(self, entries: Iterable[tuple[int, int, Monitor]]) -> None:
        """`put` each (session id, revision, Monitor), in order."""
        with self._lock:
            for session_id, revision, monitor in entries:
                self._entries[session_id] = (revision, monitor)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


monitors = MonitorCache(MONITORS_KEPT)


def _new_monitor(session: Session, configs: dict[int | None, Config]) -> Monitor:
    """A Monitor of the session's profile. Before its first event a session
    takes the profile its model selects among its project's stored profiles
    and the built-in ones (it was created with the built-in choice: the
    transcripts app does not read stored profiles). `configs`: the projects'
    profiles as the caller's transaction read them, by project id, added to
    here (reading them took 3-4 ms a new session, and a batch of new
    sessions, as when many producers start at once, is mostly of one project)."""
    config = configs.get(session.project_id)
    if config is None:
        config = configs[session.project_id] = replay_config(session.project_id)
    if not session.event_count:
        chosen = config.select(model=session.model).name
        if chosen != session.profile:
            Session.objects.filter(pk=session.pk).update(profile=chosen)
            session.profile = chosen
    return profile_monitor(config.select(session.profile or "default"), model=session.model)


def read_stored_monitors(streams: Iterable[LiveStream]) -> None:
    """Read, in one round trip, the pickled Monitor of each stream read
    without it whose Monitor this process does not hold at its revision:
    what `stream_monitor` would read, a query a stream. Such streams come
    in bursts (every new session of a process, when many producers start
    at once), where a query each made the first second's latency."""
    streams = list(streams)
    held = monitors.held((stream.session_id, stream.revision) for stream in streams)
    unread = [
        stream for stream in streams if stream.session_id not in held and "monitor" in stream.get_deferred_fields()
    ]
    if unread:
        stored = dict(LiveStream.objects.filter(pk__in=[stream.pk for stream in unread]).values_list("pk", "monitor"))
        for stream in unread:
            stream.monitor = stored.get(stream.pk)


def stream_monitor(session: Session, stream: LiveStream, configs: dict[int | None, Config] | None = None) -> Monitor:
    """The session's Monitor as the stored events and ticks left it (under
    the session's lock): this process's own if no other wrote since, else
    the pickled one fed the events stored after it (a new one fed them all
    when none is stored or it no longer loads: the detector code changed).
    `configs`: see `_new_monitor` (a transaction's, shared by its sessions)."""
    if (monitor := monitors.take(session.pk, stream.revision)) is not None:
        return monitor
    monitor, fed = None, 0
    if stream.monitor is not None:
        try:
            monitor, fed = pickle.loads(bytes(stream.monitor)), stream.monitor_events  # noqa: S301 - ours only
        except Exception:  # noqa: BLE001 - any unpickling failure means "rebuild"
            pass
    if monitor is None:
        monitor, fed = _new_monitor(session, {} if configs is None else configs), 0
    if session.event_count > fed:
        events = Event.objects.filter(session=session, seq__gt=fed).order_by("seq").values_list("data", flat=True)
        for data in events.iterator(chunk_size=REPLAY_CHUNK):
            monitor.feed(data)
        monitor.take_checkpoints()  # stored when they were first recorded
    return monitor
