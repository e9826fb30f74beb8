"""Declared detector parameters.

Each detector declares its parameters as a dataclass next to its code, every
field made with `param()`: a default, and for the tuner a range and step or a
set of choices. `build_params` turns a mapping from a config file into that
dataclass, refusing unknown keys and bad values with the key's path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .detection import ACTIONS


class ConfigError(ValueError):
    """A bad profile or config value; the message starts with the key's path."""


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """What the tuner may try for one parameter."""

    name: str
    default: Any
    low: float | None = None
    high: float | None = None
    step: float | None = None
    choices: tuple | None = None
    doc: str = ""


def param(default: Any, *, low=None, high=None, step=None, choices=None, doc: str = "", tune: bool = True):
    """A dataclass field with tuning metadata. Mutable defaults are copied."""
    choices = tuple(choices) if choices else None
    meta = {"low": low, "high": high, "step": step, "choices": choices, "doc": doc, "tune": tune}
    if isinstance(default, (list, dict, set)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


def action_param(default: str, doc: str = "what the detection asks the consumer to do"):
    return param(default, choices=ACTIONS, doc=doc, tune=False)


def param_specs(params_cls: type) -> list[ParamSpec]:
    """The tunable parameters of a params dataclass, in declaration order."""
    specs = []
    for f in dataclasses.fields(params_cls):
        meta = f.metadata
        if not meta.get("tune", False):
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        specs.append(ParamSpec(f.name, default, meta["low"], meta["high"], meta["step"], meta["choices"], meta["doc"]))
    return specs


def _coerce(path: str, value: Any, default: Any, meta: dict) -> Any:
    expected = type(default)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
        value = expected(value) if ok else value
    else:
        ok = isinstance(value, expected)
    if not ok:
        raise ConfigError(f"{path}: expected {expected.__name__}, got {type(value).__name__} {value!r}")
    if meta.get("choices") and value not in meta["choices"]:
        raise ConfigError(f"{path}: {value!r} is not one of {', '.join(map(str, meta['choices']))}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if meta.get("low") is not None and value < meta["low"]:
            raise ConfigError(f"{path}: {value!r} is below the minimum {meta['low']}")
        if meta.get("high") is not None and value > meta["high"]:
            raise ConfigError(f"{path}: {value!r} is above the maximum {meta['high']}")
    return value


def build_params(params_cls: type, values: dict, path: str, base: Any = None) -> Any:
    """`params_cls` with `values` applied over `base` (or the defaults).

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class P:
    ...     window: int = param(50, low=10)
    >>> build_params(P, {"window": 60}, "profiles.x.d").window
    60
    >>> build_params(P, {"windw": 60}, "profiles.x.d")
    Traceback (most recent call last):
    ...
    detector.params.ConfigError: profiles.x.d.windw: unknown key (known: window)
    """
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: expected a table of parameters, got {type(values).__name__}")
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    base = base if base is not None else params_cls()
    changes = {}
    for key, value in values.items():
        if key not in fields:
            raise ConfigError(f"{path}.{key}: unknown key (known: {', '.join(fields)})")
        changes[key] = _coerce(f"{path}.{key}", value, getattr(base, key), fields[key].metadata)
    try:
        return dataclasses.replace(base, **changes)
    except ConfigError as exc:  # a params class's own check (__post_init__) names the key
        raise ConfigError(f"{path}.{exc}") from None


def params_to_dict(params: Any) -> dict:
    """The plain mapping a config file holds for these parameters."""
    out = {}
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out
