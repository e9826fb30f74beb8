"""Properties of the agent-loop detectors over random tool sessions: text
between events changes no tool detection, every detection's region lies
before its `at`, and a stream gives the same detections whatever runs beside
it, across a pickle round trip and in another interpreter."""

from __future__ import annotations

import json
import pickle
import random
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from detector.monitor import Monitor
from tests.detector.tools.stream import call, detections, result
from tests.shared_paths import REPO_ROOT

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
@given(steps, steps)
def test_a_stream_gives_the_same_detections_whatever_runs_beside_it(plan, other):
    # Alone, then again while another stream's Monitor is fed in step with
    # it, and with a pickle round trip halfway (the live lab keeps Monitors
    # so): state shared between Monitors, or lost by pickling, shows here.
    events, beside = session(plan, chatter=True), session(other, chatter=False)
    alone = [d.to_dict() for d in detections(Monitor("default"), events)]
    monitor, neighbour, found = Monitor("default"), Monitor("default"), []
    for index, event in enumerate(events):
        if index == len(events) // 2:
            monitor = pickle.loads(pickle.dumps(monitor))
        found += monitor.feed(event)
        if index < len(beside):
            neighbour.feed(beside[index])
    assert [d.to_dict() for d in found] == alone


# Detections of streams read from stdin (a JSON list of event lists), printed as JSON.
RUN_STREAMS = """
import json, sys
from detector import Monitor
found = []
for events in json.load(sys.stdin):
    monitor = Monitor("default")
    found.append([d.to_dict() for event in events for d in monitor.feed(event)])
print(json.dumps(found))
"""


def detections_in_another_interpreter(streams: list[list[dict]], hash_seed: str) -> list:
    result = subprocess.run(
        [sys.executable, "-c", RUN_STREAMS],
        input=json.dumps(streams), capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT), "PYTHONHASHSEED": hash_seed},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_same_streams_give_the_same_detections_in_other_interpreters():
    # Nothing may depend on the process: string hashes differ between
    # interpreters (PYTHONHASHSEED), and a resumed live Monitor or a replay
    # runs in another process than the one that started the stream.
    draw = random.Random(18)
    plans = [
        [(draw.choice(["read_file", "deploy"]), draw.randrange(2), draw.choice([True, False, None]), draw.randrange(2))
         for _ in range(draw.randrange(5, 40))]
        for _ in range(40)
    ]  # fmt: skip
    streams = [session(plan, chatter=True) for plan in plans]
    here = [[d.to_dict() for d in detections(Monitor("default"), events)] for events in streams]
    assert sum(map(len, here)) > 40, "the streams loop often enough to compare detections"
    assert detections_in_another_interpreter(streams, "1") == here
    assert detections_in_another_interpreter(streams, "2") == here
