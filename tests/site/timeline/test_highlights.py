"""highlights.py: the unit, repetitions, onset and fired markers, overlaps."""

from __future__ import annotations

from loopguard_site.timeline.highlights import MAX_REPETITIONS, highlight_items


def detection(ident, start, end, at, period, detector="text_loop"):
    return {"id": ident, "detector": detector, "start": start, "end": end, "at": at, "period": period}


def piece(start, end, text, classes=(), detections=()):
    return {"text": text, "start": start, "end": end, "classes": list(classes), "detections": list(detections)}


def marker(kind, at, ident, label):
    return {"marker": kind, "at": at, "detection": ident, "label": label}


def test_it_marks_the_unit_each_repetition_the_onset_and_where_it_fired():
    items = highlight_items("xxabcabcabcabyy", 0, [detection(7, 2, 13, 14, 3)])
    assert items == [
        piece(0, 2, "xx"),
        marker("onset", 2, 7, "text_loop: loop began at 2"),
        piece(2, 5, "abc", ["hl-region", "hl-unit"], [7]),
        piece(5, 8, "abc", ["hl-region", "hl-rep", "hl-rep-odd"], [7]),
        piece(8, 11, "abc", ["hl-region", "hl-rep", "hl-rep-even"], [7]),
        piece(11, 13, "ab", ["hl-region", "hl-rep", "hl-rep-odd"], [7]),
        piece(13, 14, "y"),
        marker("fired", 14, 7, "text_loop fired at 14"),
        piece(14, 15, "y"),
    ]


def test_overlapping_detections_cut_the_text_into_flat_pieces_with_both():
    outer = detection(1, 0, 8, 8, 4, "a")
    inner = detection(2, 2, 6, 9, 2, "b")
    items = highlight_items("abababab", 0, [outer, inner], at_channel_end=True)
    assert items == [
        marker("onset", 0, 1, "a: loop began at 0"),
        piece(0, 2, "ab", ["hl-region", "hl-unit"], [1]),
        marker("onset", 2, 2, "b: loop began at 2"),
        piece(2, 4, "ab", ["hl-region", "hl-unit"], [1, 2]),
        # The innermost repetition (b's first) decides the parity.
        piece(4, 6, "ab", ["hl-region", "hl-rep", "hl-rep-odd"], [1, 2]),
        piece(6, 8, "ab", ["hl-region", "hl-rep", "hl-rep-odd"], [1]),
        marker("fired", 8, 1, "a fired at 8"),
    ]


def test_a_window_inside_a_region_shows_only_its_own_tiles_and_markers():
    items = highlight_items("cabc", 10, [detection(3, 0, 100, 100, 3)])
    assert items == [
        piece(10, 12, "ca", ["hl-region", "hl-rep", "hl-rep-odd"], [3]),
        piece(12, 14, "bc", ["hl-region", "hl-rep", "hl-rep-even"], [3]),
    ]


def test_a_marker_at_the_windows_end_belongs_to_the_next_window_unless_the_channel_ends():
    d = detection(4, 0, 2, 2, 2)
    assert highlight_items("ab", 0, [d])[-1] == piece(0, 2, "ab", ["hl-region", "hl-unit"], [4])
    assert highlight_items("ab", 0, [d], at_channel_end=True)[-1] == marker("fired", 2, 4, "text_loop fired at 2")


def test_repetition_tiles_are_bounded_per_window():
    text = "a" * 5000
    items = highlight_items(text, 0, [detection(5, 0, 5000, 5000, 1)])
    tiles = [item for item in items if "hl-rep" in item.get("classes", [])]
    assert len(tiles) == MAX_REPETITIONS
    assert items[-1] == piece(MAX_REPETITIONS + 1, 5000, "a" * (5000 - MAX_REPETITIONS - 1), ["hl-region"], [5])
    assert "".join(item.get("text", "") for item in items) == text


def test_no_detections_leaves_one_plain_piece():
    assert highlight_items("<b>&</b>", 40, []) == [piece(40, 48, "<b>&</b>")]
