"""Profiles and config files (detector/config.py): TOML and JSON, many
profiles in one file, selection by name or model glob, every parameter of
every detector overridable, detectors switched off, errors that name the
key, and dump -> load round trips."""

from __future__ import annotations

import dataclasses
import json

import pytest

from detector import ConfigError, Monitor, builtin_config, dump_config, get_profile, load_config, loads_config
from detector.config import BUILTIN_PROFILES
from detector.content_chanting import Params as ChantingParams
from detector.reasoning_checkpoint import Params as CheckpointParams
from detector.registry import DETECTORS

TOML = """
[profiles.strict-preview]
extends = "default"
models = ["*preview*", "*-exp"]
description = "strict for previews"
version = 3

[profiles.flash-chanting]
models = ["*flash*"]
[profiles.flash-chanting.content_chanting]
min_occurrences = 6
max_mean_gap = 300
action = "warn"

[profiles.old-seed]
extends = "seed000"
[profiles.old-seed.reasoning_checkpoint]
checkpoints = [1000, 2000]
separators = "。\\n"

[profiles.both]
extends = "old-seed"
models = ["*"]
[profiles.both.content_chanting]
channel = "reasoning"
"""

JSON_TEXT = json.dumps(
    {
        "profiles": {
            "strict-preview": {
                "extends": "default",
                "models": ["*preview*", "*-exp"],
                "description": "strict for previews",
                "version": 3,
            },
            "flash-chanting": {
                "models": ["*flash*"],
                "content_chanting": {"min_occurrences": 6, "max_mean_gap": 300, "action": "warn"},
            },
            "old-seed": {
                "extends": "seed000",
                "reasoning_checkpoint": {"checkpoints": [1000, 2000], "separators": "。\n"},
            },
            "both": {"extends": "old-seed", "models": ["*"], "content_chanting": {"channel": "reasoning"}},
        }
    }
)


def test_toml_holds_many_profiles():
    config = loads_config(TOML, "team.toml")
    assert list(config.profiles)[:4] == ["strict-preview", "flash-chanting", "old-seed", "both"]
    assert set(BUILTIN_PROFILES) <= set(config.profiles)
    flash = config.select("flash-chanting")
    assert list(flash.detectors) == ["content_chanting"]  # no `extends`: only what it lists
    assert flash.detectors["content_chanting"] == ChantingParams(min_occurrences=6, max_mean_gap=300, action="warn")
    old = config.select("old-seed")
    assert old.detectors["reasoning_checkpoint"] == CheckpointParams(checkpoints=[1000, 2000], separators="。\n")
    both = config.select("both")
    assert both.detectors["reasoning_checkpoint"] == old.detectors["reasoning_checkpoint"]
    assert both.detectors["content_chanting"] == ChantingParams(channel="reasoning")
    preview = config.select("strict-preview")
    assert (preview.models, preview.description, preview.version) == (("*preview*", "*-exp"), "strict for previews", 3)
    assert preview.detectors == get_profile("default").detectors


def test_json_equals_toml():
    assert loads_config(JSON_TEXT, "team.json").to_dict() == loads_config(TOML, "team.toml").to_dict()


def test_files_by_suffix(tmp_path):
    (tmp_path / "team.toml").write_text(TOML, encoding="utf-8")
    (tmp_path / "team.json").write_text(JSON_TEXT, encoding="utf-8")
    assert load_config(tmp_path / "team.toml").to_dict() == load_config(tmp_path / "team.json").to_dict()


@pytest.mark.parametrize(
    ("model", "profile"),
    [
        ("gemini-2.5-flash", "flash-chanting"),
        ("GEMINI-2.0-FLASH-LITE", "flash-chanting"),  # globs ignore case
        ("gemini-3-pro-preview", "strict-preview"),  # file order: the first match wins
        ("qwen-exp", "strict-preview"),
        ("claude-sonnet", "both"),
    ],
)
def test_select_by_model_glob(model, profile):
    config = loads_config(TOML, "team.toml")
    assert config.select(model=model).name == profile
    assert Monitor.for_model(model, config).profile.name == profile


def test_select_falls_back_to_default():
    config = builtin_config()
    assert config.select(model="some-model").name == "default"
    assert config.select().name == "default"
    assert config.select(model="o3-preview").name == "preview"


def test_select_unknown_name():
    with pytest.raises(ConfigError, match=r"^profile 'nope' is not defined \(known: default, "):
        builtin_config().select("nope")


def test_builtin_profiles_hold_their_detectors():
    assert "reasoning_checkpoint" in get_profile("seed000").detectors
    assert "content_chanting" in get_profile("gemini").detectors
    assert "reasoning_checkpoint" not in get_profile("default").detectors


def test_detector_switched_off():
    config = loads_config('[profiles.quiet]\nextends = "gemini"\n[profiles.quiet.content_chanting]\nenabled = false\n')
    assert "content_chanting" not in config.select("quiet").detectors
    assert "content_chanting" in config.select("gemini").detectors
    monitor = Monitor("quiet", config=config)
    assert monitor.feed({"type": "content", "text": "I know the answer is here and I will find it. " * 30}) == []


def _candidates(meta, current):
    """Values that may be valid for one parameter (declared in `meta`)."""
    if meta.get("choices"):
        yield from meta["choices"]
    elif isinstance(current, bool):
        yield not current
    elif isinstance(current, (int, float)):
        low, high = meta.get("low"), meta.get("high")
        step = meta.get("step") or ((high - low) / 10 if low is not None and high is not None else 1)
        for value in (current + step, current - step, low, high):
            if value is not None:
                yield type(current)(value)
    elif isinstance(current, str):
        yield from (current[:-1], current + current[-1:], "x")
    elif isinstance(current, (list, tuple)):
        if current and all(isinstance(v, int) for v in current):
            yield [v + 1 for v in current]
        yield list(current[:-1])
        yield list(current) * 2
        yield ["x"]


def _all_parameters():
    for name, cls in DETECTORS.items():
        defaults = cls.Params()
        for field in dataclasses.fields(cls.Params):
            value = getattr(defaults, field.name)
            yield pytest.param(name, field.name, field.metadata, value, id=f"{name}.{field.name}")


@pytest.mark.parametrize(("detector", "key", "meta", "default"), list(_all_parameters()))
def test_every_parameter_is_overridable(detector, key, meta, default):
    for value in _candidates(meta, default):
        if value == (list(default) if isinstance(default, tuple) else default):
            continue
        data = {"profiles": {"custom": {detector: {key: value}}}}
        try:
            config = loads_config(json.dumps(data), "custom.json")
        except ConfigError as exc:
            assert str(exc).startswith(f"custom.json: profiles.custom.{detector}.{key}: ")
            continue
        params = config.select("custom").detectors[detector]
        got = getattr(params, key)
        assert (list(got) if isinstance(got, tuple) else got) == value
        # and it survives a TOML round trip
        again = loads_config(dump_config(config, "toml"), "again.toml").select("custom").detectors[detector]
        assert again == params
        return
    pytest.fail(f"no other value of {detector}.{key} is accepted")


CC = "[profiles.x.content_chanting]\n"
RC = "[profiles.x.reasoning_checkpoint]\n"


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("[profiles.x]\ncolour = 1\n", "profiles.x.colour", "unknown key"),
        ("[profiles.x.content_chantin]\n", "profiles.x.content_chantin", "unknown key"),
        (CC + "chunk_sise = 5\n", "profiles.x.content_chanting.chunk_sise", "unknown key (known: chunk_size, "),
        (CC + "chunk_size = 'big'\n", "profiles.x.content_chanting.chunk_size", "expected int, got str 'big'"),
        (CC + "chunk_size = 5\n", "profiles.x.content_chanting.chunk_size", "5 is below the minimum 10"),
        (CC + "chunk_size = true\n", "profiles.x.content_chanting.chunk_size", "expected int, got bool"),
        (CC + "action = 'halt'\n", "profiles.x.content_chanting.action", "'halt' is not one of warn, "),
        (CC + "enabled = 'no'\n", "profiles.x.content_chanting.enabled", "expected true or false"),
        (RC + "checkpoints = [3, 2]\n", "profiles.x.reasoning_checkpoint.checkpoints", "must increase"),
        (RC + "checkpoints = 2000\n", "profiles.x.reasoning_checkpoint.checkpoints", "expected list"),
        ("[profiles.x]\ncontent_chanting = 3\n", "profiles.x.content_chanting", "expected a table of parameters"),
        ("[profiles.x]\nextends = 'nope'\n", "profiles.x.extends", "no profile named 'nope'"),
        ("[profiles.x]\nextends = 'y'\n[profiles.y]\nextends = 'x'\n", "profiles.x.extends", "profiles extend each"),
        ("[profiles.x]\nmodels = '*flash*'\n", "profiles.x.models", "expected a list of model-name globs"),
        ("[profiles.x]\nversion = 'two'\n", "profiles.x.version", "expected a whole number"),
        ("[profiles.x]\ndescription = 2\n", "profiles.x.description", "expected a string"),
        ("profile = 1\n", "profile", "unknown key"),
        ("profiles = 1\n", "profiles", "expected a table of profiles"),
    ],
)
def test_errors_name_the_key(text, key, message):
    with pytest.raises(ConfigError) as err:
        loads_config(text, "c.toml", json_format=False)
    assert str(err.value).startswith(f"c.toml: {key}: {message}")


def test_toml_syntax_error():
    with pytest.raises(ConfigError, match=r"^c\.toml: invalid TOML: .*line 1"):
        loads_config("[profiles.x\n", "c.toml", json_format=False)


def test_json_syntax_error_names_the_line():
    with pytest.raises(ConfigError, match=r"^c\.json: line 3: invalid JSON: "):
        loads_config('{\n "profiles": {\n  "x": }\n}', "c.json")


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read: "):
        load_config(tmp_path / "missing.toml")


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_dump_then_load_gives_the_same_profiles(fmt):
    config = loads_config(TOML, "team.toml")
    text = dump_config(config, fmt)
    again = loads_config(text, f"again.{fmt}", json_format=fmt == "json")
    assert again.to_dict() == config.to_dict()
    assert again.profiles == config.profiles


def test_builtin_config_round_trip():
    config = builtin_config()
    assert loads_config(dump_config(config, "toml"), "b.toml").profiles == config.profiles


def test_dump_unknown_format():
    with pytest.raises(ConfigError, match=r"^format: expected toml or json, got 'yaml'"):
        dump_config(builtin_config(), "yaml")
