"""LoopGuard's detectors: push events in, get loop detections out.

>>> from detector import Monitor
>>> monitor = Monitor("default")
>>> monitor.feed({"type": "turn"})
[]

Pure Python, standard library only: no Django, no clock, no I/O outside the
command line (`detector.cli`), the live client and the LLM judge's HTTP client
(`detector.chat_client`).

The public API is the names of `__all__` below and these modules (their
`__all__` where they have one, else their names without a leading
underscore); everything else may change without notice. The lab uses
nothing else (tests/site/foundation/test_detector_public_api.py).

Public modules:

- `detector.config`: profiles and config files (TOML, JSON), the built-in ones.
- `detector.params`: the parameter declarations of each detector (name,
  default, range), which the tuner reads.
- `detector.registry`: every detector family by its name (`DETECTORS`).
- `detector.importers`: transcript formats in, events out (incrementally,
  with a format's `ChunkReader`, for streams).
- `detector.importers.openai_chat`: its `ChunkReader` reads a chat-completions stream as it comes (the proxy).
- `detector.importers.anthropic_messages`: its `EventReader`, likewise for Anthropic Messages.
- `detector.importers.openai_responses`: its `EventReader`, likewise for OpenAI Responses.
- `detector.importers.otel`: its `SpanReader` turns OpenTelemetry spans into events (the OTLP receiver).
- `detector.evaluation`: scoring a profile on a labelled corpus.
- `detector.tuning`: searching a profile's parameters on labelled streams,
  cross-validated (`loopguard tune`, the lab's tuning jobs).
- `detector.json_depth`: how deeply a JSON text nests, found without parsing
  it (the lab refuses too-deep input before any recursive code sees it).
- `detector.loop_signal`: which detections stop a stream.
- `detector.chat_client`: the LLM judge's HTTP client.
- `detector.cli`: the `loopguard` command line.
"""

from .backoff import backoff_seconds
from .base import StreamContext
from .config import Config, Profile, builtin_config, dump_config, get_profile, load_config, loads_config
from .detection import ACTIONS, Checkpoint, Detection
from .events import EVENT_TYPES, TEXT_CHANNELS, EventError, validate_event
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
    "StreamContext",
    "TEXT_CHANNELS",
    "backoff_seconds",
    "builtin_config",
    "dump_config",
    "get_profile",
    "guard_anthropic_stream",
    "guard_openai_stream",
    "load_config",
    "loads_config",
    "validate_event",
]
