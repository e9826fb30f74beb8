from __future__ import annotations

import pytest

from detector.config import builtin_config
from detector.monitor import Monitor
from tests.detector.tools.stream import call, detections, only, result, run

SAME = "consecutive_identical_tool_calls"


def same_calls(n: int, name: str = "run_shell_command") -> list[dict]:
    return [call(name, command="make test") for _ in range(n)]


@pytest.mark.parametrize(
    "n, expected",
    [
        (2, []),
        (3, [(SAME, 0, 3, 3, 3, "warn")]),
        (9, [(SAME, 0, 3, 3, 3, "warn")]),
        (10, [(SAME, 0, 3, 3, 3, "warn"), (SAME, 0, 10, 10, 10, "stop")]),
        (12, [(SAME, 0, 3, 3, 3, "warn"), (SAME, 0, 10, 10, 10, "stop")]),
    ],
)
def test_default_warns_at_3_and_stops_at_10_identical_calls(n, expected):
    assert run(Monitor("default"), same_calls(n)) == expected


@pytest.mark.parametrize("n, expected", [(4, []), (5, [(SAME, 0, 5, 5, 5, "stop")]), (7, [(SAME, 0, 5, 5, 5, "stop")])])
def test_gemini_profile_stops_at_5_identical_calls(n, expected):
    assert run(Monitor("gemini"), same_calls(n)) == expected


def test_a_different_call_starts_a_new_run():
    events = same_calls(2) + [call("ls", path=".")] + same_calls(3)
    assert run(only("tool_repetition"), events) == [(SAME, 3, 6, 6, 3, "warn")]


def test_text_between_identical_calls_does_not_break_the_run():
    events = []
    for _ in range(3):
        events += [{"type": "content", "text": "I used the wrong tool again. "}, call("ReadMediaFile", path="a.tsx")]
    assert run(only("tool_repetition"), events) == [(SAME, 0, 3, 3, 3, "warn")]


def test_a_user_message_starts_afresh():
    events = same_calls(2) + [{"type": "user", "text": "again please"}] + same_calls(2)
    assert run(only("tool_repetition"), events) == []


def test_the_same_call_with_the_same_result_is_a_loop():
    events = []
    for _ in range(3):
        events += [call("get_page", n=1), result(output="page one")]
    assert run(only("tool_repetition"), events) == [(SAME, 0, 3, 3, 3, "warn")]


def test_the_same_call_with_a_new_result_each_time_is_not():
    events = []
    for page in range(12):
        events += [call("next_page"), result(output=f"page {page}")]
    assert run(only("tool_repetition"), events) == []


def test_a_new_result_restarts_the_run_at_the_call_that_returned_it():
    outputs = ["x", "x", "y", "y", "y"]
    events = []
    for output in outputs:
        events += [call("status", job=7), result(output=output)]
    # calls 0,1 return x: call 2 is the third identical call -> fires; its
    # result y restarts the run at call 2, so call 4 is the third again.
    assert run(only("tool_repetition"), events) == [(SAME, 0, 3, 3, 3, "warn"), (SAME, 2, 5, 5, 3, "warn")]


def test_the_seeds_plain_count_ignores_results():
    events = []
    for page in range(3):
        events += [call("next_page"), result(output=f"page {page}")]
    found = run(only("tool_repetition", new_result_restarts=False), events)
    assert found == [(SAME, 0, 3, 3, 3, "warn")]


@pytest.mark.parametrize("n, expected", [(5, []), (6, [("tool_polling_cap", 0, 6, 6, 6, "warn")])])
def test_polling_with_changing_results_is_cut_at_the_polling_cap(n, expected):
    events = []
    for i in range(n):
        events += [call("job_status", job=7), result(output=f"{i * 10}% done")]
    assert run(only("tool_repetition", polling_cap=6), events) == expected


def test_allowlisted_tools_repeat_freely_and_break_runs():
    assert run(only("tool_repetition"), [call("poll_job", job=1) for _ in range(40)]) == []
    events = same_calls(2) + [call("debugger_next")] + same_calls(2)
    assert run(only("tool_repetition"), events) == []


def test_a_configured_allowlist_replaces_the_default():
    monitor = only("tool_repetition", allowlist=["run_shell_command"])
    assert run(monitor, same_calls(10)) == []
    assert run(only("tool_repetition", allowlist=[]), [call("sleep") for _ in range(3)]) == [(SAME, 0, 3, 3, 3, "warn")]


def cycle(period: int, calls: int) -> list[dict]:
    return [call("lookup", n=i % period) for i in range(calls)]


@pytest.mark.parametrize("period", [2, 3, 4, 5])
def test_a_cycle_fires_at_3_rounds_not_before(period):
    monitor = only("tool_repetition")
    assert run(monitor, cycle(period, 3 * period - 1)) == []
    found = detections(monitor, [call("lookup", n=period - 1)])
    assert [(d.type, d.start, d.end, d.at, d.period, d.repeats, d.action) for d in found] == [
        ("tool_call_cycle", 0, 3 * period, 3 * period, period, 3, "warn")
    ]


@pytest.mark.parametrize("period", [2, 3, 4, 5])
def test_a_cycle_stops_at_5_rounds(period):
    found = run(only("tool_repetition"), cycle(period, 5 * period))
    assert found == [
        ("tool_call_cycle", 0, 3 * period, 3 * period, 3, "warn"),
        ("tool_call_cycle", 0, 5 * period, 5 * period, 5, "stop"),
    ]


def test_a_cycle_names_its_calls_in_order():
    (found,) = detections(only("tool_repetition"), [call("a", x=1), call("b")] * 3)
    assert found.unit == 'a({"x":1}) → b({})'
    assert found.message.startswith("Loop detected: The AI was cycling through the same 2 tool calls (3 rounds).")


def test_a_cycle_longer_than_the_maximum_period_is_not_one():
    assert run(only("tool_repetition"), cycle(6, 18)) == []
    assert run(only("tool_repetition", cycle_max_period=2), cycle(3, 9)) == []


def test_a_run_of_one_call_is_not_reported_as_a_cycle():
    assert [d[0] for d in run(only("tool_repetition"), same_calls(12))] == [SAME, SAME]


# Seed 004's test list: preview strict checking.
PREVIEW = "gemini-3-pro-preview"


def preview_monitor(model: str = PREVIEW) -> Monitor:
    return Monitor("preview", model=model)


@pytest.mark.parametrize("tool", ["read_file", "read_many_files", "glob", "search_file_content", "ls"])
def test_preview_intensive_tools_fire_at_4_calls_whatever_the_arguments(tool):
    calls = [call(tool, path=f"file{i}.ts") for i in range(4)]
    assert run(preview_monitor(), calls[:3]) == []
    assert run(preview_monitor(), calls) == [("repeated_tool_name", 0, 4, 4, 4, "stop")]


def test_preview_other_tools_fire_at_5_calls():
    calls = [call("run_shell_command", command=f"echo {i}") for i in range(5)]
    assert run(preview_monitor(), calls[:4]) == []
    assert run(preview_monitor(), calls) == [("repeated_tool_name", 0, 5, 5, 5, "stop")]


@pytest.mark.parametrize("tool", ["glob", "search_file_content"])
def test_preview_glob_and_search_over_the_threshold_fire_once(tool):
    calls = [call(tool, pattern=f"*.{i}") for i in range(7)]
    assert run(preview_monitor(), calls) == [("repeated_tool_name", 0, 4, 4, 4, "stop")]


def test_preview_counts_calls_between_other_tools_and_names_without_case_or_separators():
    calls = [call("ReadFile", path="a"), call("Grep", q="x"), call("ReadFile", path="b")]
    calls += [call("Grep", q="y"), call("ReadFile", path="c"), call("ReadFile", path="d")]
    (found,) = detections(preview_monitor("K2.6-code-preview"), calls)
    assert (found.type, found.unit, found.start, found.end, found.repeats) == (
        "repeated_tool_name",
        "ReadFile",
        0,
        6,
        4,
    )


def test_preview_counts_start_again_at_a_user_message():
    calls = [call("read_file", path=f"f{i}") for i in range(3)]
    assert run(preview_monitor(), calls + [{"type": "user", "text": "now the others"}] + calls) == []


def test_non_preview_models_are_not_counted_by_name():
    calls = [call("read_file", path=f"file{i}.ts") for i in range(10)]
    assert run(preview_monitor("gemini-2.5-pro"), calls) == []


def test_non_preview_models_fire_at_10_identical_calls_as_standard():
    calls = [call("read_file", path="same.ts") for _ in range(10)]
    assert run(preview_monitor("gemini-2.5-pro"), calls[:9]) == [(SAME, 0, 3, 3, 3, "warn")]
    assert run(preview_monitor("gemini-2.5-pro"), calls)[-1] == (SAME, 0, 10, 10, 10, "stop")


def test_a_preview_model_selects_the_preview_profile():
    assert Monitor.for_model("Gemini-3-Pro-Preview").profile.name == "preview"
    assert builtin_config().select(model="gemini-2.5-pro").name == "default"


def test_the_model_can_come_from_the_session_header():
    monitor = Monitor("preview")
    events = [{"type": "session", "model": PREVIEW}] + [call("ls", path=str(i)) for i in range(4)]
    assert run(monitor, events) == [("repeated_tool_name", 0, 4, 4, 4, "stop")]


def test_strict_mode_counts_at_most_1000_tool_names():
    monitor = preview_monitor()
    run(monitor, [call(f"tool_{i}") for i in range(1500)])
    (detector,) = [d for d in monitor.detectors if d.name == "tool_repetition"]
    assert len(detector.names) == 1000 and "tool_1499" in detector.names and "tool_0" not in detector.names
