"""Scoring a profile on a labelled corpus (`*.jsonl` or `*.jsonl.gz`; the schema is
in fixtures/corpus/README.md).

A corpus row is replayed as a stream: a `session` event with the row's model,
a `turn` event, then the row's `text` in 4-character deltas on its channel
(`reasoning` or `content`); a `tool_calls` row holds one JSON call per line,
fed as one `tool_call` event per line (plus a `tool_result` when the line
carries `ok`, `output` or `result`). A `finish` event ends every row.

Definitions (what `loopguard eval` reports):

- A *hit* on a loop row is a detection with ``at >= loop_start``: it fired
  once the loop had begun. Recall = loop rows with a hit / loop rows.
- A detection with ``at < loop_start`` whose unit is the labelled loop's unit
  (without digits and whitespace, up to rotation and whole multiples)
  caught that loop before its labelled start (the label's start can fall
  late, e.g. where a list number gains a digit): an *early hit*, counted as
  a hit with delay 0 and listed apart.
- Any other detection with ``at < loop_start`` on a loop row is an *early
  alarm*: it fired on the normal text before the loop. Such rows are listed
  apart; the row still counts as recalled if a later detection hits.
- A *false alarm* is a normal row with any detection. False-positive rate =
  normal rows with a detection / normal rows.
- *Delay* of a hit row = ``at - loop_start`` of its first hit, in characters
  (text rows) or in tool calls (tool rows, where `loop_start` is converted to
  the index of the call it falls in). The overall delay figures are over
  text rows only; tool rows' delays are reported in their own group.

Rows are independent streams; the work is O(total text) per profile.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .config import Profile
from .events import EventError
from .importers.builder import tool_args
from .llm_judge import ChatClient
from .monitor import Monitor

CHUNK_CHARS = 4
ROW_CHANNELS = ("reasoning", "content", "tool_calls")
LABELS = ("loop", "normal")


@dataclass(frozen=True)
class CorpusRow:
    id: str
    label: str
    channel: str
    model: str
    text: str
    loop_start: int | None
    loop_unit: str
    source: str
    line: int


class CorpusError(ValueError):
    """A corpus line that does not follow the schema; the message names the file and line."""


def _row_error(path: str, line: int, message: str) -> CorpusError:
    return CorpusError(f"{path}: line {line}: {message}")


def read_corpus(path: str | Path) -> list[CorpusRow]:
    """All rows of a corpus file (plain or gzip-compressed, `*.gz`), checked
    against the schema."""
    path = str(path)
    try:
        if path.endswith(".gz"):
            handle = gzip.open(path, "rt", encoding="utf-8")
        else:
            handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from exc
    rows = []
    with handle:
        try:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    rows.append(_parse_row(raw, path, number))
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{path}: not UTF-8 text ({exc.reason})") from exc
        except (OSError, EOFError) as exc:  # a .gz file that is not gzip, or cut short
            raise CorpusError(f"{path}: cannot read: {exc}") from exc
    return rows


def _parse_row(raw: str, path: str, number: int) -> CorpusRow:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _row_error(path, number, f"invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise _row_error(path, number, "a row must be a JSON object")
    for key in ("id", "label", "channel", "text"):
        if not isinstance(data.get(key), str):
            raise _row_error(path, number, f"field {key!r} must be a string")
    if data["label"] not in LABELS:
        raise _row_error(path, number, f"field 'label' must be one of {', '.join(LABELS)}, not {data['label']!r}")
    if data["channel"] not in ROW_CHANNELS:
        known = ", ".join(ROW_CHANNELS)
        raise _row_error(path, number, f"field 'channel' must be one of {known}, not {data['channel']!r}")
    loop_start = data.get("loop_start")
    if data["label"] == "loop":
        if isinstance(loop_start, bool) or not isinstance(loop_start, int) or not 0 <= loop_start <= len(data["text"]):
            raise _row_error(path, number, "field 'loop_start' of a loop row must be an offset into 'text'")
    else:
        loop_start = None
    model = data.get("model") or ""
    if not isinstance(model, str):
        raise _row_error(path, number, "field 'model' must be a string")
    loop_unit = data.get("loop_unit") or ""
    if not isinstance(loop_unit, str):
        raise _row_error(path, number, "field 'loop_unit' must be a string")
    row = CorpusRow(
        data["id"], data["label"], data["channel"], model, data["text"], loop_start, loop_unit, path, number
    )
    if row.channel == "tool_calls":
        list(_tool_events(row))  # refuse bad call lines now, naming the row's line
    return row


def _tool_events(row: CorpusRow) -> Iterator[dict]:
    for index, line in enumerate(row.text.split("\n")):
        if not line.strip():
            continue
        try:
            call = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _row_error(row.source, row.line, f"tool call {index + 1}: invalid JSON: {exc.msg}") from exc
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _row_error(row.source, row.line, f"tool call {index + 1}: expected an object with a string 'name'")
        yield {"type": "tool_call", "name": call["name"], "args": tool_args(call.get("args"))}
        if any(key in call for key in ("ok", "output", "result")):
            result: dict = {"type": "tool_result"}
            if isinstance(call.get("ok"), bool):
                result["ok"] = call["ok"]
            output = call.get("output", call.get("result"))
            if output is not None:
                result["output"] = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            yield result


def row_events(row: CorpusRow, chunk_chars: int = CHUNK_CHARS) -> Iterator[dict]:
    """The event stream a row is replayed as."""
    yield {"type": "session", "id": row.id, "model": row.model}
    yield {"type": "turn"}
    if row.channel == "tool_calls":
        yield from _tool_events(row)
    else:
        text = row.text
        for offset in range(0, len(text), chunk_chars):
            yield {"type": row.channel, "text": text[offset : offset + chunk_chars]}
    yield {"type": "finish"}


def loop_start_position(row: CorpusRow) -> int:
    """`loop_start` on the row's own scale: a character offset for text rows,
    the index of the tool call it falls in for tool rows."""
    assert row.loop_start is not None
    if row.channel != "tool_calls":
        return row.loop_start
    before = row.text[: row.loop_start].split("\n")
    return sum(1 for line in before[:-1] if line.strip())


@dataclass
class RowResult:
    row: CorpusRow
    detections: list
    hit_at: int | None = None  # `at` of the first hit (loop_start for an early hit)
    early: bool = False  # fired before loop_start on a loop row, on something else
    early_hit: bool = False  # caught the labelled loop before loop_start

    @property
    def delay(self) -> int | None:
        if self.hit_at is None:
            return None
        return self.hit_at - loop_start_position(self.row)


def run_row(row: CorpusRow, profile: Profile, *, judge_client: ChatClient | None = None) -> RowResult:
    monitor = Monitor(profile, model=row.model, judge_client=judge_client)
    detections = []
    for event in row_events(row):
        try:
            detections.extend(monitor.feed(event))
        except EventError as exc:
            raise _row_error(row.source, row.line, str(exc)) from exc
    result = RowResult(row, detections)
    if row.label == "loop":
        start = loop_start_position(row)
        before = [d for d in detections if d.at < start]
        result.early_hit = any(d.channel != "tools" and same_loop(d.unit, row.loop_unit) for d in before)
        result.early = any(not (d.channel != "tools" and same_loop(d.unit, row.loop_unit)) for d in before)
        hits = [d.at for d in detections if d.at >= start]
        if result.early_hit:
            result.hit_at = start
        elif hits:
            result.hit_at = min(hits)
    return result


_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def _without_digits(text: str) -> str:
    return _SPACES.sub("", _DIGITS.sub("", text))


def same_loop(unit: str, loop_unit: str) -> bool:
    r"""Whether a detected unit is the labelled loop unit: equal without their
    digits and whitespace, up to rotation and whole multiples
    (a label's unit may start inside a number: "99. Agile\n1").

    >>> same_loop("4. Agile\n", "99. Agile\n1")
    True
    """
    a, b = _without_digits(unit), _without_digits(loop_unit)
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return len(long) % len(short) == 0 and long in short * (len(long) // len(short) + 1)


def percentile(values: list[int], q: float) -> float | None:
    """The q-quantile by linear interpolation between closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Score:
    """Metrics over a group of rows."""

    loops: int = 0
    hits: int = 0
    normals: int = 0
    false_alarms: int = 0
    delays: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    false_alarm_ids: list[str] = field(default_factory=list)
    early_alarm_ids: list[str] = field(default_factory=list)
    early_hit_ids: list[str] = field(default_factory=list)

    def add(self, result: RowResult, count_delay: bool = True) -> None:
        row = result.row
        if row.label == "loop":
            self.loops += 1
            if result.hit_at is None:
                self.misses.append(row.id)
            else:
                self.hits += 1
                if count_delay:
                    self.delays.append(result.delay)
            if result.early:
                self.early_alarm_ids.append(row.id)
            if result.early_hit:
                self.early_hit_ids.append(row.id)
        else:
            self.normals += 1
            if result.detections:
                self.false_alarms += 1
                self.false_alarm_ids.append(row.id)

    @property
    def recall(self) -> float | None:
        return self.hits / self.loops if self.loops else None

    @property
    def false_positive_rate(self) -> float | None:
        return self.false_alarms / self.normals if self.normals else None

    def to_dict(self) -> dict:
        return {
            "loops": self.loops,
            "hits": self.hits,
            "recall": self.recall,
            "normals": self.normals,
            "false_alarms": self.false_alarms,
            "false_positive_rate": self.false_positive_rate,
            "median_delay": percentile(self.delays, 0.5),
            "p90_delay": percentile(self.delays, 0.9),
            "misses": self.misses,
            "false_alarm_ids": self.false_alarm_ids,
            "early_alarm_ids": self.early_alarm_ids,
            "early_hit_ids": self.early_hit_ids,
        }


@dataclass
class CorpusScore:
    """A profile's score on one corpus file: overall and per row channel."""

    path: str
    overall: Score = field(default_factory=Score)
    channels: dict[str, Score] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "overall": self.overall.to_dict(),
            "channels": {name: score.to_dict() for name, score in self.channels.items()},
        }


def score_rows(
    path: str,
    rows: list[CorpusRow],
    profile: Profile | Callable[[CorpusRow], Profile],
    *,
    judge_client_for: Callable[[Profile], ChatClient | None] | None = None,
) -> CorpusScore:
    """The score of `profile` on the rows, or of the profile `profile(row)`
    gives each row; `judge_client_for(profile)`: the LLM judge's chat client
    of a profile that has one."""
    score = CorpusScore(path)
    for row in rows:
        chosen = profile if isinstance(profile, Profile) else profile(row)
        result = run_row(row, chosen, judge_client=judge_client_for(chosen) if judge_client_for else None)
        # Overall delays are in characters: tool rows' (in calls) stay in their own group.
        score.overall.add(result, count_delay=row.channel != "tool_calls")
        score.channels.setdefault(row.channel, Score()).add(result)
    score.channels = {name: score.channels[name] for name in ROW_CHANNELS if name in score.channels}
    return score
