"""The agent-loop detectors in the built-in profiles, their declared
parameters and messages, and their score on the corpus's tool-call rows."""

from __future__ import annotations

import dataclasses

import pytest

from detector.config import builtin_config, dump_config, loads_config
from detector.evaluation import read_corpus, run_row
from detector.params import param_specs
from detector.registry import DETECTORS
from detector.tool_messages import DEFAULT_MESSAGE, MESSAGES, message_for
from tests.shared_paths import shared_path

TOOL_DETECTORS = [
    "tool_repetition",
    "tool_outcomes",
    "truncation",
    "tool_intent",
    "tool_dedup",
    "repeated_failure",
    "backoff",
    "health",
]


def test_default_and_preview_run_every_agent_loop_detector():
    config = builtin_config()
    for name in ("default", "preview"):
        assert set(TOOL_DETECTORS) <= set(config.select(name).detectors)


def test_seed000_has_no_tool_detectors_and_gemini_only_the_call_hash():
    config = builtin_config()
    assert not set(TOOL_DETECTORS) & set(config.select("seed000").detectors)
    gemini = config.select("gemini")
    assert set(gemini.detectors) & set(TOOL_DETECTORS) == {"tool_repetition"}
    params = gemini.detectors["tool_repetition"]
    assert (params.consecutive_threshold, params.consecutive_action, params.consecutive_escalation) == (5, "stop", 0)
    assert (params.new_result_restarts, params.polling_cap, params.cycle_repeats) == (False, 0, 0)


def test_preview_is_default_with_strict_counting_for_preview_models():
    config = builtin_config()
    preview, default = config.select("preview"), config.select("default")
    assert preview.models == ("*preview*",)
    assert preview.detectors["tool_repetition"] == dataclasses.replace(
        default.detectors["tool_repetition"], strict_models=["*preview*"]
    )
    assert default.detectors["tool_repetition"].strict_models == []


def test_profiles_configure_the_tool_detectors_and_survive_a_round_trip():
    text = """
    [profiles.agents]
    extends = "default"
    [profiles.agents.tool_repetition]
    consecutive_threshold = 4
    intensive_tools = ["ReadFile"]
    [profiles.agents.tool_intent]
    enabled = false
    """
    config = loads_config(text)
    agents = config.select("agents")
    assert agents.detectors["tool_repetition"].consecutive_threshold == 4
    assert agents.detectors["tool_repetition"].intensive_tools == ["ReadFile"]
    assert "tool_intent" not in agents.detectors
    assert loads_config(dump_config(config)).select("agents") == agents


@pytest.mark.parametrize(
    "text, error",
    [
        ("[profiles.x.tool_repetition]\nconsecutive_threshold = 1", "consecutive_threshold: 1 is below the minimum 2"),
        ("[profiles.x.tool_outcomes]\nwarn_action = 'shout'", "warn_action: 'shout' is not one of"),
        ("[profiles.x.health]\nstall_seconds = 'soon'", "stall_seconds: expected float"),
        ("[profiles.x.tool_dedup]\ncache = 5", "profiles.x.tool_dedup.cache: unknown key"),
        (
            "[profiles.x.tool_repetition]\nconsecutive_threshold = 6\nconsecutive_escalation = 5",
            "profiles.x.tool_repetition.consecutive_escalation: 5 must be above consecutive_threshold 6",
        ),
        (
            "[profiles.x.tool_repetition]\nallowlist = [1]",
            "profiles.x.tool_repetition.allowlist: expected a list of strings",
        ),
        ("[profiles.x.tool_outcomes]\nforce_text_at = 2\nwarn_at = 3", "force_text_at: 2 is below warn_at 3"),
        ("[profiles.x.backoff]\njitter_low = 0.3", "profiles.x.backoff.jitter_high: 0.2 is below jitter_low 0.3"),
        (
            "[profiles.x.health]\nidle_seconds = 600.0",
            "profiles.x.health.idle_seconds: 600.0 must be above stall_seconds",
        ),
    ],
)
def test_bad_tool_detector_settings_name_their_key(text, error):
    with pytest.raises(ValueError, match=error):
        loads_config(text, "agents.toml")


@pytest.mark.parametrize("name", TOOL_DETECTORS)
def test_every_numeric_parameter_declares_a_range_for_the_tuner(name):
    specs = param_specs(DETECTORS[name].Params)
    numeric = [s for s in specs if isinstance(s.default, (int, float)) and not isinstance(s.default, bool)]
    assert numeric
    for spec in numeric:
        assert spec.low is not None and spec.high is not None and spec.step, spec.name
        assert spec.low <= spec.default <= spec.high, spec.name


DETECTION_TYPES = [
    "consecutive_identical_tool_calls",
    "tool_call_cycle",
    "tool_polling_cap",
    "repeated_tool_name",
    "repeated_failing_batch",
    "truncated_tool_calls",
    "tool_intent_without_call",
    "duplicate_tool_call",
    "repeated_failure",
    "backoff_advised",
    "consecutive_errors",
    "stream_stalled",
    "stream_idle",
]


@pytest.mark.parametrize("kind", DETECTION_TYPES)
def test_every_detection_type_has_its_own_message(kind):
    fields = {"unit": "read_file({})", "repeats": 3, "period": 1, "earlier": 0, "delay_s": 4.4, "gap_s": 600.0}
    message = message_for(kind, **fields)
    assert kind in MESSAGES and message != DEFAULT_MESSAGE and "{" not in message.replace("read_file({})", "")


def test_the_consecutive_call_message_follows_seed_004():
    assert message_for("consecutive_identical_tool_calls", unit="ls({})", repeats=3, period=1) == (
        "Loop detected: The AI was calling the same tool repeatedly (ls({}), 3 times in a row). "
        "Try a different approach or provide more context."
    )
    assert message_for("some_future_type") == DEFAULT_MESSAGE


def tool_rows():
    rows = read_corpus(shared_path("corpus", "real_small.jsonl"))
    return [row for row in rows if row.channel == "tool_calls"]


def test_default_catches_every_tool_call_loop_of_the_corpus_after_it_starts():
    loops = [row for row in tool_rows() if row.label == "loop"]
    assert len(loops) >= 2
    profile = builtin_config().select("default")
    for row in loops:
        result = run_row(row, profile)
        assert result.hit_at is not None and not result.early, row.id


def test_default_flags_none_of_the_tool_call_normals_of_the_corpus():
    normals = [row for row in tool_rows() if row.label == "normal"]
    assert len(normals) >= 4
    profile = builtin_config().select("default")
    assert {row.id: run_row(row, profile).detections for row in normals} == {row.id: [] for row in normals}
