"""Random and mutated input never raises anything but `TranscriptError`, and
whatever imports gives valid events starting with a session event.
2,600 generated cases in all (CI runs every one)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from detector.events import validate_event
from detector.importers import FORMATS, TranscriptError, parse_bytes
from tests.shared_paths import FORMATS_DIR

SAMPLES = [path.read_bytes() for path in sorted(FORMATS_DIR.glob("*/*"))]
FORMAT_NAMES = st.sampled_from(("auto", "auto", *FORMATS))
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def import_or_reject(data: bytes, fmt: str) -> None:
    try:
        transcript = parse_bytes(data, "fuzz.jsonl", fmt)
    except TranscriptError as exc:
        assert str(exc).startswith("fuzz.jsonl: ")
        return
    assert transcript.events[0]["type"] == "session"
    assert all(validate_event(event) for event in transcript.events)
    assert transcript.format in FORMATS
    json.dumps(transcript.events)  # what `convert` and the store write must serialise


@settings(FUZZ, max_examples=600)
@given(st.binary(max_size=3000), FORMAT_NAMES)
def test_random_bytes(data, fmt):
    import_or_reject(data, fmt)


@st.composite
def mutated_samples(draw):
    data = bytearray(draw(st.sampled_from(SAMPLES)))
    for _ in range(draw(st.integers(1, 3))):
        lines = bytes(data).split(b"\n")
        operation = draw(st.sampled_from(["truncate", "flip", "drop", "duplicate", "swap"]))
        if operation == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif operation == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data[at] = draw(st.integers(0, 255))
        elif operation == "drop":
            del lines[draw(st.integers(0, len(lines) - 1))]
            data = bytearray(b"\n".join(lines))
        elif operation == "duplicate":
            at = draw(st.integers(0, len(lines) - 1))
            lines.insert(at, lines[at])
            data = bytearray(b"\n".join(lines))
        elif operation == "swap":
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


@settings(FUZZ, max_examples=1200)
@given(mutated_samples(), FORMAT_NAMES)
def test_mutated_samples(data, fmt):
    import_or_reject(data, fmt)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from([10**400, -(10**400), 1e308, -1e308, "²", "9" * 40, "2026-13-45T99:00:00Z"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _replace_somewhere(value, path, replacement):
    """`value` with the node reached by following `path` (indices into the
    keys / items met on the way down) replaced."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return replacement
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[key] = _replace_somewhere(value[key], path[1:], replacement)
    return copy


@st.composite
def retyped_samples(draw):
    """A sample, still valid JSON, with one value somewhere replaced by a
    value of any JSON type: parsers must not trust field types."""
    text = draw(st.sampled_from(SAMPLES)).decode("utf-8")
    path = draw(st.lists(st.integers(0, 50), min_size=1, max_size=7))
    replacement = draw(JSON_VALUES)
    try:
        return json.dumps(_replace_somewhere(json.loads(text), path, replacement)).encode()
    except json.JSONDecodeError:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        at = draw(st.integers(0, len(records) - 1))
        records[at] = _replace_somewhere(records[at], path, replacement)
        return "\n".join(json.dumps(r) for r in records).encode()


@settings(FUZZ, max_examples=800)
@given(retyped_samples(), FORMAT_NAMES)
def test_retyped_samples(data, fmt):
    import_or_reject(data, fmt)
