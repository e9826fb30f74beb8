"""LoopGuard's detectors: push events in, get loop detections out.

>>> from detector import Monitor
>>> monitor = Monitor("default")
>>> monitor.feed({"type": "turn"})
[]

Pure Python, standard library only: no Django, no clock, no I/O outside the
command line (`detector.cli`) and the live client.
"""

from .config import Config, Profile, builtin_config, dump_config, get_profile, load_config, loads_config
from .detection import ACTIONS, Checkpoint, Detection
from .events import EVENT_TYPES, EventError, validate_event
from .live_client import LiveSession, LiveSessionError
from .loop_signal import LoopDetected
from .monitor import Monitor
from .params import ConfigError
from .stream_guard import guard_anthropic_stream, guard_openai_stream

__all__ = [
    "ACTIONS",
    "Checkpoint",
    "Config",
    "ConfigError",
    "Detection",
    "EVENT_TYPES",
    "EventError",
    "LiveSession",
    "LiveSessionError",
    "LoopDetected",
    "Monitor",
    "Profile",
    "builtin_config",
    "dump_config",
    "get_profile",
    "guard_anthropic_stream",
    "guard_openai_stream",
    "load_config",
    "loads_config",
    "validate_event",
]
