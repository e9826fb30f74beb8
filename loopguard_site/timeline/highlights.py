"""Inline highlights of a window of channel text (pure, no Django).

A detection on a text channel marks its repeated region [start, end), the
first period of it (the unit), each following repetition (tiles of one
period, the last one cut at `end`), and two points: the onset (`start`,
where the loop began) and where the detector fired (`at`). Regions of
several detections overlap freely: the window is cut at every boundary into
flat pieces, each carrying the union of the classes and detection ids
covering it, so nesting is always well formed. Cost: O(S log S) for S spans
in the window; repetitions are tiled only inside the window, at most
`MAX_REPETITIONS` a detection, so a period of 1 over a megabyte stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_REPETITIONS = 200  # repetition tiles per detection and window; beyond, the region shading alone


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    css: str  # "hl-region", "hl-unit" or "hl-rep"
    detection: int
    repetition: int = 0  # 0 the unit, k the k-th repetition after it


@dataclass(frozen=True, slots=True)
class Marker:
    at: int
    kind: str  # "onset" or "fired"
    detection: int
    label: str


def detection_spans(detection: dict, lo: int, hi: int) -> list[Span]:
    """The spans of one detection (`id`, `start`, `end`, `period`) that meet [lo, hi)."""
    start, end, period, ident = detection["start"], detection["end"], detection["period"], detection["id"]
    spans = [Span(start, end, "hl-region", ident)]
    if period <= 0 or end <= start:
        return [span for span in spans if span.start < hi and span.end > lo]
    spans.append(Span(start, min(start + period, end), "hl-unit", ident))
    first = max(1, (lo - start) // period)
    for k in range(first, first + MAX_REPETITIONS):
        tile = start + k * period
        if tile >= end or tile >= hi:
            break
        spans.append(Span(tile, min(tile + period, end), "hl-rep", ident, k))
    return [span for span in spans if span.start < hi and span.end > lo and span.end > span.start]


def detection_markers(detection: dict) -> list[Marker]:
    name = detection["detector"]
    return [
        Marker(detection["start"], "onset", detection["id"], f"{name}: loop began at {detection['start']:,}"),
        Marker(detection["at"], "fired", detection["id"], f"{name} fired at {detection['at']:,}"),
    ]


def highlight_items(text: str, base: int, detections: Sequence[dict], *, at_channel_end: bool = False) -> list[dict]:
    """The window `text`, which starts at channel offset `base`, cut into
    pieces and markers in reading order:

    - `{"text", "start", "end", "classes": [...], "detections": [ids]}`
      (`classes` empty for plain text; `hl-rep-odd` / `hl-rep-even` tell
      adjacent repetitions apart, taken from the innermost detection);
    - `{"marker": "onset" | "fired", "at", "detection", "label"}` before
      the piece that starts there (a marker at the window's end is kept only
      when `at_channel_end`, so adjacent windows never both show it).
    """
    lo, hi = base, base + len(text)
    spans = [span for detection in detections for span in detection_spans(detection, lo, hi)]
    markers = [
        marker
        for detection in detections
        for marker in detection_markers(detection)
        if lo <= marker.at < hi or (at_channel_end and marker.at == hi)
    ]
    boundaries = {lo, hi, *(m.at for m in markers)}
    boundaries.update(edge for s in spans for edge in (max(s.start, lo), min(s.end, hi)))
    cuts = sorted(boundaries)
    markers.sort(key=lambda m: (m.at, m.kind != "onset", m.detection))
    # A sweep: spans enter at their (clipped) start and leave at their end;
    # every cut is a span boundary, so each active span covers the whole piece.
    spans.sort(key=lambda s: max(s.start, lo))
    active: list[Span] = []
    entered = 0
    items: list[dict] = []
    marker_index = 0
    for piece_start, piece_end in zip(cuts, [*cuts[1:], None], strict=True):
        while marker_index < len(markers) and markers[marker_index].at == piece_start:
            marker = markers[marker_index]
            items.append({"marker": marker.kind, "at": marker.at, "detection": marker.detection, "label": marker.label})
            marker_index += 1
        if piece_end is None:
            break
        active = [span for span in active if span.end > piece_start]
        while entered < len(spans) and max(spans[entered].start, lo) <= piece_start:
            active.append(spans[entered])
            entered += 1
        items.append(_piece(text, base, piece_start, piece_end, active))
    return items


def _piece(text: str, base: int, start: int, end: int, covering: list[Span]) -> dict:
    classes = sorted({span.css for span in covering})
    # The innermost repetition shows: the span that starts last, then the shortest.
    tiles = sorted((s for s in covering if s.css == "hl-rep"), key=lambda s: (-s.start, s.end - s.start))
    repetition = tiles[0].repetition if tiles else None
    if repetition is not None:
        classes.append("hl-rep-odd" if repetition % 2 else "hl-rep-even")
    return {
        "text": text[start - base : end - base],
        "start": start,
        "end": end,
        "classes": classes,
        "detections": sorted({span.detection for span in covering}),
    }
