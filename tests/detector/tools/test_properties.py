"""Properties of the agent-loop detectors over random tool sessions: text
between events changes no tool detection, every detection's region lies
before its `at`, and the same stream always gives the same detections."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from detector.monitor import Monitor
from tests.detector.tools.stream import call, detections, result

FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None, max_examples=150)

steps = st.lists(
    st.tuples(
        st.sampled_from(["read_file", "grep", "deploy", "poll_job"]),
        st.integers(0, 2),  # argument: a small alphabet, so calls repeat
        st.sampled_from([True, False, None]),  # ok flag of the result, None: no result event
        st.integers(0, 1),  # output variant
    ),
    max_size=40,
)


def session(plan, chatter: bool) -> list[dict]:
    events: list[dict] = [{"type": "turn"}]
    for name, arg, ok, output in plan:
        if chatter:
            events.append({"type": "reasoning", "text": "hmm "})
        events.append(call(name, n=arg))
        if chatter:
            events.append({"type": "content", "text": "Trying again. "})
        if ok is not None:
            events.append(result(ok=ok, output=f"out{output}"))
    return events


def summary(found) -> list[tuple]:
    return [(d.detector, d.type, d.start, d.end, d.at, d.repeats, d.action) for d in found]


TOOL_ONLY = ["tool_repetition", "tool_dedup", "repeated_failure", "backoff", "tool_outcomes", "health"]


@FAST
@given(steps)
def test_text_between_events_changes_no_tool_detection(plan):
    quiet = [d for d in detections(Monitor("default"), session(plan, chatter=False)) if d.detector in TOOL_ONLY]
    chatty = [d for d in detections(Monitor("default"), session(plan, chatter=True)) if d.detector in TOOL_ONLY]
    assert summary(quiet) == summary(chatty)


@FAST
@given(steps)
def test_regions_end_by_the_time_they_are_reported(plan):
    calls = sum(1 for _ in plan)
    for detection in detections(Monitor("preview", model="x-preview"), session(plan, chatter=False)):
        assert 0 <= detection.start <= detection.end <= detection.at <= calls
        assert detection.message and detection.channel in ("tools", "session")


@FAST
@given(steps)
def test_the_same_stream_gives_the_same_detections(plan):
    events = session(plan, chatter=True)
    first = [d.to_dict() for d in detections(Monitor("default"), events)]
    assert first == [d.to_dict() for d in detections(Monitor("default"), events)]
