"""What the session page shows of a session under one profile, assembled
from its streams and that profile's results (pure, no Django): the first
detection groups and checkpoint evaluations by name, the conversation, the
timeline figures, and what the page's script needs to scroll to a span."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .charts import clickable_detections, timeline_figure
from .conversation import PAGE_ITEMS, ItemIndex, conversation_blocks, detection_groups, detection_items, item_views
from .panels import CONTEXT_CALLS, CONTEXT_CHARS, MAX_DETECTION_WINDOWS, PAGE_CALLS, PAGE_CHARS
from .streams import SessionStreams

LISTED = 100  # detection groups, and checkpoint evaluations, listed by name


def session_page_parts(streams: SessionStreams, detections: Sequence[dict], checkpoints: Sequence[dict]) -> dict:
    """The page of a session laid out whole."""
    figures = {"offset": timeline_figure(streams, detections, checkpoints, axis="offset")}
    if streams.has_time:
        figures["time"] = timeline_figure(streams, detections, checkpoints, axis="time")
    return page_parts(
        figures=figures,
        index=ItemIndex(streams),
        item_count=len(streams.items),
        items_of=lambda start, end: item_views(streams, detections, start, end),
        detections=detections,
        checkpoints=checkpoints,
    )


def page_parts(
    *,
    figures: dict[str, dict],
    index: ItemIndex,
    item_count: int,
    items_of: Callable[[int, int], list[dict]],
    detections: Sequence[dict],
    checkpoints: Sequence[dict],
    detection_windows: int = MAX_DETECTION_WINDOWS,
) -> dict:
    """The page from its figures, the index of its items (an `ItemIndex` or
    anything with its `of`), how many items the conversation has and the
    views of a range of them (`items_of(start, end)`); the conversation
    opens windows around the first `detection_windows` detections."""
    groups = detection_groups(detections)
    listed = groups[:LISTED]
    # Markers and list entries scroll the text to a detection: the page needs those, not all.
    clickable = set().union(*(clickable_detections(f) for f in figures.values()), (i for g in listed for i in g["ids"]))
    conversation = [
        block if block["gap"] else {**block, "items": items_of(block["start"], block["end"])}
        for block in conversation_blocks(item_count, detections, index, detection_windows)
    ]
    return {
        "groups": listed,
        "group_count": len(groups),
        "detection_count": len(detections),
        "checkpoints": checkpoints[:LISTED],
        "checkpoint_count": len(checkpoints),
        "conversation": conversation,
        "figures": figures,
        "targets": {
            "detections": detection_targets(detections, clickable, index),
            "first": groups[0]["ids"][0] if groups else None,
            "pages": {"chars": PAGE_CHARS, "calls": PAGE_CALLS, "items": PAGE_ITEMS},
            "context": {"chars": CONTEXT_CHARS, "calls": CONTEXT_CALLS},
        },
    }


def detection_targets(detections: Sequence[dict], ids: set[int], index: ItemIndex) -> dict[int, dict]:
    """Where the detections with these ids are, for the script to scroll
    there: channel positions, and the conversation items holding the loop's
    start and the point it was caught (`items`, null on `session`)."""
    return {
        d["id"]: {**{k: d[k] for k in ("channel", "start", "end", "at")}, "items": detection_items(d, index)}
        for d in detections
        if d["id"] in ids
    }


def zoom_answer(figure: dict, detections: Sequence[dict], index: ItemIndex) -> dict:
    """A zoomed figure and where the detections it shows are."""
    return {"figure": figure, "targets": detection_targets(detections, clickable_detections(figure), index)}
