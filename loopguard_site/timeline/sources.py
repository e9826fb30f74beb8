"""Where the session page reads a session from: all of its events laid out
at once (`WholeSession`), or, for a session long enough to keep one, its
stored layout (`windows.LaidOutSession`). Both answer the page's questions
alike, so the views never ask how long a session is."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from loopguard_site.transcripts.layout_rows import session_layout
from loopguard_site.transcripts.models import Session

from .charts import timeline_figure
from .conversation import ItemIndex, item_views
from .page import session_page_parts, zoom_answer
from .panels import window_of
from .selectors import session_streams
from .streams import SessionStreams
from .windows import LaidOutSession


class WholeSession:
    """The session page's reads of a session laid out whole from its events."""

    def __init__(self, session: Session):
        self.session = session

    @cached_property
    def streams(self) -> SessionStreams:
        return session_streams(self.session)

    def page_parts(self, detections: Sequence[dict], checkpoints: Sequence[dict]) -> dict:
        return session_page_parts(self.streams, detections, checkpoints)

    def item_of(self, channel: str, offset: int) -> int | None:
        """The index of the item of `channel` holding `offset`."""
        return ItemIndex(self.streams).of(channel, offset)

    def items(self, detections: Sequence[dict], start: int, end: int) -> tuple[int, int, list[dict]]:
        """Items [start, end) (clamped to the conversation) as the page shows them."""
        start = min(start, len(self.streams.items))
        end = max(start, min(end, len(self.streams.items)))
        return start, end, item_views(self.streams, detections, start, end)

    def window(self, channel: str, detections: Sequence[dict], start: int, end: int) -> dict:
        """[start, end) of a channel (`panels.window_of`),
        from the events that channel needs alone."""
        streams = session_streams(self.session, channel=channel)
        return window_of(streams, channel, detections, start, end)

    def zoom(
        self, detections: Sequence[dict], checkpoints: Sequence[dict], *, axis: str, x_range: tuple[float, float]
    ) -> dict:
        """The timeline of [x_range] on `axis`, and where its detections are."""
        figure = timeline_figure(self.streams, detections, checkpoints, axis=axis, x_range=x_range)
        return zoom_answer(figure, detections, ItemIndex(self.streams))


def page_source(session: Session) -> WholeSession | LaidOutSession:
    """The reads of `session`'s page: from its stored layout when it keeps one."""
    state = session_layout(session)
    return WholeSession(session) if state is None else LaidOutSession(session.pk, state)
