"""Profiles: which detectors run, with which parameters, for which models.

A config file (TOML or JSON) holds many profiles::

    [profiles.strict-preview]
    extends = "default"           # optional: start from another profile
    models = ["*preview*"]        # model-name globs that select this profile
    description = "..."
    [profiles.strict-preview.tool_repetition]
    consecutive_threshold = 4     # any declared parameter of the detector
    [profiles.strict-preview.content_chanting]
    enabled = false               # switch a detector off

A profile without `extends` runs only the detectors it lists. The built-in
profiles (`default`, `seed000`, `gemini`, ...) are defined the same way:
each detector class names the built-in profiles it is part of. Every key is
checked; an unknown key or a bad value raises `ConfigError` naming its path.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .params import ConfigError, build_params, params_to_dict
from .registry import DETECTORS

PROFILE_KEYS = ("extends", "models", "description", "version")

# Built-in profiles: their metadata; the detectors in each come from the
# detector classes' `builtin` tables.
BUILTIN_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"description": "LoopGuard's continuous detectors on every channel"},
    "seed000": {"description": "seed 000 as designed: reasoning checkpoints at 2000/3000/5000 characters"},
    "gemini": {"description": "seed 002 / Gemini CLI: content chanting and tool-call hash"},
    "preview": {
        "extends": "default",
        "models": ["*preview*"],
        "description": "default with seed 004's strict tool counting for preview models",
    },
}


@dataclass(frozen=True)
class Profile:
    """A resolved profile: enabled detectors and their parameters."""

    name: str
    detectors: dict[str, Any]
    models: tuple[str, ...] = ()
    description: str = ""
    version: int = 0

    def matches(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model.lower(), glob.lower()) for glob in self.models)

    def to_dict(self) -> dict:
        data: dict[str, Any] = {}
        if self.models:
            data["models"] = list(self.models)
        if self.description:
            data["description"] = self.description
        if self.version:
            data["version"] = self.version
        for name, params in self.detectors.items():
            data[name] = params_to_dict(params)
        return data


@dataclass(frozen=True)
class Config:
    """Named profiles; `select` picks one by name or by model glob."""

    profiles: dict[str, Profile] = field(default_factory=dict)

    def select(self, name: str | None = None, model: str | None = None) -> Profile:
        """The profile called `name`; else the first (in file order) whose
        model globs match `model`; else `default`."""
        if name is not None:
            if name not in self.profiles:
                raise ConfigError(f"profile {name!r} is not defined (known: {', '.join(self.profiles)})")
            return self.profiles[name]
        if model:
            for profile in self.profiles.values():
                if profile.matches(model):
                    return profile
        return self.profiles["default"]

    def to_dict(self) -> dict:
        return {"profiles": {name: p.to_dict() for name, p in self.profiles.items()}}


def _builtin_tables() -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {name: dict(meta) for name, meta in BUILTIN_PROFILES.items()}
    for det_name, cls in DETECTORS.items():
        for profile_name, overrides in cls.builtin.items():
            tables[profile_name][det_name] = dict(overrides)
    return tables


def _resolve(name: str, tables: dict[str, dict], done: dict[str, Profile], source: str, chain: tuple = ()) -> Profile:
    if name in done:
        return done[name]
    path = f"{source}profiles.{name}"
    if name in chain:
        raise ConfigError(f"{path}.extends: profiles extend each other in a circle ({' -> '.join(chain + (name,))})")
    table = tables[name]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: expected a table")
    parent_name = table.get("extends")
    if parent_name is not None:
        if not isinstance(parent_name, str) or parent_name not in tables:
            raise ConfigError(f"{path}.extends: no profile named {parent_name!r}")
        parent = _resolve(parent_name, tables, done, source, chain + (name,))
        detectors = dict(parent.detectors)
        models, description = parent.models, parent.description
    else:
        detectors, models, description = {}, (), ""
    if "models" in table:
        models = table["models"]
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise ConfigError(f"{path}.models: expected a list of model-name globs")
        models = tuple(models)
    description = table.get("description", description)
    if not isinstance(description, str):
        raise ConfigError(f"{path}.description: expected a string")
    version = table.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConfigError(f"{path}.version: expected a whole number")
    for key, values in table.items():
        if key in PROFILE_KEYS:
            continue
        if key not in DETECTORS:
            known = f"profile keys: {', '.join(PROFILE_KEYS)}; detectors: {', '.join(DETECTORS)}"
            raise ConfigError(f"{path}.{key}: unknown key ({known})")
        if not isinstance(values, dict):
            raise ConfigError(f"{path}.{key}: expected a table of parameters")
        values = dict(values)
        enabled = values.pop("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"{path}.{key}.enabled: expected true or false")
        if not enabled:
            detectors.pop(key, None)
            continue
        cls = DETECTORS[key]
        detectors[key] = build_params(cls.Params, values, f"{path}.{key}", base=detectors.get(key))
    profile = Profile(name=name, detectors=detectors, models=models, description=description, version=version)
    done[name] = profile
    return profile


def parse_config(data: Any, source: str = "") -> Config:
    """Profiles from parsed TOML/JSON data, over the built-in ones.

    `source` (a file name) prefixes every error path."""
    prefix = f"{source}: " if source else ""
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix}expected a table with a 'profiles' key")
    unknown = set(data) - {"profiles"}
    if unknown:
        raise ConfigError(f"{prefix}{sorted(unknown)[0]}: unknown key (a config file holds 'profiles')")
    user = data.get("profiles", {})
    if not isinstance(user, dict):
        raise ConfigError(f"{prefix}profiles: expected a table of profiles")
    tables = _builtin_tables()
    # A user profile replaces a built-in one of the same name entirely.
    tables.update(user)
    done: dict[str, Profile] = {}
    for name in tables:
        _resolve(name, tables, done, prefix)
    # User profiles first, in file order, so their model globs win.
    order = list(user) + [n for n in tables if n not in user]
    return Config({name: done[name] for name in order})


def load_config(path: str | Path) -> Config:
    """Read a TOML or JSON config file (by its suffix; `.json` is JSON)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    return loads_config(raw.decode("utf-8", errors="strict"), str(path), json_format=path.suffix.lower() == ".json")


def loads_config(text: str, source: str = "config", json_format: bool | None = None) -> Config:
    """Parse config text; `json_format=None` guesses from the first character."""
    if json_format is None:
        json_format = text.lstrip().startswith("{")
    try:
        data = json.loads(text) if json_format else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: line {exc.lineno}: invalid JSON: {exc.msg}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc
    return parse_config(data, source)


@functools.cache
def builtin_config() -> Config:
    """Parsed once: profiles are read-only, and a live server builds a
    Monitor for every new session."""
    return parse_config({})


def get_profile(name: str = "default") -> Profile:
    return builtin_config().select(name)


def dump_config(config: Config, fmt: str = "toml") -> str:
    """The config as a file `load_config` reads back to the same profiles."""
    data = config.to_dict()
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt != "toml":
        raise ConfigError(f"format: expected toml or json, got {fmt!r}")
    return _to_toml(data)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ConfigError(f"cannot write {type(value).__name__} to TOML")


def _toml_key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() and key.isascii() else json.dumps(key)


def _to_toml(data: dict) -> str:
    lines: list[str] = []
    for name, profile in data["profiles"].items():
        lines.append(f"[profiles.{_toml_key(name)}]")
        tables = {k: v for k, v in profile.items() if isinstance(v, dict)}
        for key, value in profile.items():
            if key not in tables:
                lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
        for det, params in tables.items():
            lines.append(f"[profiles.{_toml_key(name)}.{_toml_key(det)}]")
            for key, value in params.items():
                lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)
