"""What the session page shows of a session under one profile, assembled
from its streams and that profile's results (pure, no Django): the first
detections and checkpoint evaluations by name, the text and tool panels,
the timeline figures, and what the page's script needs to scroll to a span."""

from __future__ import annotations

from collections.abc import Sequence

from detector import TEXT_CHANNELS

from .charts import clickable_detections, timeline_figure
from .panels import CONTEXT_CALLS, CONTEXT_CHARS, PAGE_CALLS, PAGE_CHARS, text_panel, tool_panel
from .streams import SessionStreams

LISTED = 100  # detections, and checkpoint evaluations, listed by name


def session_page_parts(streams: SessionStreams, detections: Sequence[dict], checkpoints: Sequence[dict]) -> dict:
    figures = {"offset": timeline_figure(streams, detections, checkpoints, axis="offset")}
    if streams.has_time:
        figures["time"] = timeline_figure(streams, detections, checkpoints, axis="time")
    # Markers and list entries scroll the text to a detection: the page needs those, not all.
    listed = detections[:LISTED]
    clickable = set().union(*(clickable_detections(f) for f in figures.values()), (d["id"] for d in listed))
    return {
        "detections": listed,
        "detection_count": len(detections),
        "checkpoints": checkpoints[:LISTED],
        "checkpoint_count": len(checkpoints),
        "text_panels": [text_panel(c, streams.texts[c], detections) for c in TEXT_CHANNELS if streams.texts[c]],
        "tool_panel": tool_panel(streams.tool_calls, detections) if streams.tool_calls else None,
        "figures": figures,
        "targets": {
            "detections": {
                d["id"]: {k: d[k] for k in ("channel", "start", "end", "at")}
                for d in detections
                if d["id"] in clickable
            },
            "pages": {"chars": PAGE_CHARS, "calls": PAGE_CALLS},
            "context": {"chars": CONTEXT_CHARS, "calls": CONTEXT_CALLS},
        },
    }


def detection_targets(detections: Sequence[dict], ids: set[int]) -> dict[int, dict]:
    """Where the detections with these ids are, for the script to scroll there."""
    return {d["id"]: {k: d[k] for k in ("channel", "start", "end", "at")} for d in detections if d["id"] in ids}
