"""Per-model tuning on labelled sessions: truth per detection, a search
over every tunable parameter, and k-fold cross-validation by session.

Pure: no Django, no I/O. `loopguard tune` feeds it corpus rows; the lab
turns reviewers' labels into the same `LabelledStream`s.

**Truth of one detection** (`detection_truth`) on a labelled stream:

- on a stream labelled normal (clean) every detection is false;
- a detection of the detector and type of a false-positive mark, on its
  channel, whose span overlaps the mark's, is false;
- one that overlaps a true-loop mark of its detector is true;
- on a channel with a labelled loop start (a true-loop detection or a
  missed-loop selection), a detection at or after that start is true: the
  loop is a miss on that channel from its start until something fires;
- any other detection is unlabelled.

A stream's detections end at the first detection whose action is `stop`
(the consumer cuts the stream there): later ones never happen.

**Per session**: a loop stream is *caught* when one of its detections is
not false; its *delay* is the first such detection's ``at`` minus the loop
start on its channel (the detection's own ``start`` when the channel has
none), at least 0. A normal stream is *flagged* when anything fires.
precision = caught loops / (caught loops + flagged normals); recall =
caught loops / loops. Each figure carries its Wilson 95 % interval.

**Per detector** (and type): detections true, false and unlabelled, and the
precision of the labelled ones.

**Search** (`search`): coordinate-wise. In each pass, for each enabled
detector (profile order) and each tunable parameter (declaration order),
every candidate value is tried with the others held; the best is kept.
Candidates: a parameter's choices, both values of a flag, or its declared
range by its step, thinned to `MAX_GRID` values. The objective, smaller
better: (flagged normals beyond `fp_budget`, -caught loops, false
detections, median delay, flagged normals). A candidate must be strictly
better, so of equals the earlier (the base first) wins. Passes repeat until
one changes nothing, at most `max_passes`, `max_evaluations` candidates in
all, within `time_limit` seconds. Then each changed parameter is tried back
at its base value and kept there when that scores as well: a tuned profile
changes only what its labels ask for.

**Validation** (`tune`): sessions go to `folds` folds by label (the i-th
loop stream to fold i mod k, the i-th normal likewise), the search runs
on all but one fold from the base, and the tuned profile is scored on the
fold it did not see; the held-out figures pool the k folds. A tuned profile
whose held-out recall is below the base's is marked `loses_recall`.

Cost: detectors of a profile run independently, so a candidate re-runs
only the detector it changes, on each stream once per distinct parameter
set (cached across passes and folds). One evaluation costs O(total events)
feeds of one detector the first time, O(streams) after.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .config import Profile
from .evaluation import CorpusRow, loop_start_position, percentile, row_events
from .monitor import Monitor
from .params import ConfigError, ParamSpec, build_params, param_specs
from .registry import DETECTORS

LOOP, NORMAL = "loop", "normal"
TRUE_LOOP, FALSE_POSITIVE = "true_loop", "false_positive"
MAX_GRID = 9  # values tried per parameter and pass
DEFAULT_MAX_EVALUATIONS = 600
DEFAULT_MAX_PASSES = 3
DEFAULT_FOLDS = 5
FOLDS_RANGE = (2, 10)
DEFAULT_MIN_SESSIONS = 10  # labelled loop and clean sessions each, below which figures are flagged uncertain
WILSON_Z = 1.96


class TuningCancelled(Exception):
    """The caller's `cancelled()` said stop."""


@dataclass(frozen=True)
class DetectionMark:
    """A reviewer's final label of one detection: the detector and type that
    fired it and its span (tool-call indices on `tools`, inclusive)."""

    detector: str
    type: str
    channel: str
    start: int
    end: int
    label: str  # TRUE_LOOP or FALSE_POSITIVE


@dataclass(frozen=True)
class LabelledStream:
    """One labelled session: `label` is "loop" or "normal"."""

    key: str
    label: str
    events: Sequence[dict]
    model: str = ""
    loop_starts: Mapping[str, int] = field(default_factory=dict)
    marks: Sequence[DetectionMark] = ()


def stream_from_row(row: CorpusRow) -> LabelledStream:
    """A corpus row (detector.evaluation) as a labelled stream."""
    starts = {}
    if row.label == LOOP:
        starts = {"tools" if row.channel == "tool_calls" else row.channel: loop_start_position(row)}
    return LabelledStream(row.id, row.label, list(row_events(row)), row.model, starts)


@dataclass(frozen=True, slots=True)
class Found:
    """One detection, as much of it as scoring needs."""

    event: int  # index of the event whose feed fired it
    detector: str
    type: str
    channel: str
    start: int
    end: int
    at: int
    stop: bool


def run_detector(stream: LabelledStream, detector: str, params: Any) -> tuple[Found, ...]:
    """Every detection one detector fires on the stream, up to its first `stop`."""
    monitor = Monitor(Profile(name="tuning", detectors={detector: params}), model=stream.model)
    found: list[Found] = []
    for index, event in enumerate(stream.events):
        for d in monitor.feed(event):
            found.append(Found(index, d.detector, d.type, d.channel, d.start, d.end, d.at, d.action == "stop"))
        if monitor.stopped:
            break
    return tuple(found)


def _overlaps(found: Found, mark: DetectionMark) -> bool:
    return found.channel == mark.channel and found.start <= mark.end and mark.start <= found.end


def detection_truth(stream: LabelledStream, found: Found) -> bool | None:
    """True, False, or None (unlabelled): see the module docstring."""
    if stream.label == NORMAL:
        return False
    for mark in stream.marks:
        if mark.detector == found.detector and mark.type == found.type and _overlaps(found, mark):
            return mark.label == TRUE_LOOP
    start = stream.loop_starts.get(found.channel)
    if start is not None and found.at >= start:
        return True
    return None


@dataclass(frozen=True)
class Outcome:
    """One labelled stream under one profile."""

    key: str
    label: str
    flagged: bool  # a loop stream caught, or a normal one with any detection
    delay: float | None  # of a caught loop
    false_detections: int
    channel: str  # of the detection that caught a loop ("" otherwise): its delay's unit
    detections: tuple[tuple[str, str, bool | None], ...]  # (detector, type, truth) of each


def wilson(successes: int, trials: int, z: float = WILSON_Z) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (None for no trials).

    >>> [round(x, 4) for x in wilson(8, 10)]
    [0.4902, 0.9433]
    """
    if not trials:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(centre - half, 0.0), min(centre + half, 1.0))


def metrics_row(outcomes: Sequence[Outcome]) -> dict:
    """Precision, recall (with Wilson intervals), F1, delays and false
    detections over the outcomes."""
    loops = [o for o in outcomes if o.label == LOOP]
    normals = [o for o in outcomes if o.label != LOOP]
    caught = sum(o.flagged for o in loops)
    flagged_normals = sum(o.flagged for o in normals)
    delays = [o.delay for o in loops if o.flagged]
    flagged = caught + flagged_normals
    precision = caught / flagged if flagged else None
    recall = caught / len(loops) if loops else None
    f1 = None
    if precision is not None and recall is not None and precision + recall:
        f1 = 2 * precision * recall / (precision + recall)
    return {
        "loops": len(loops),
        "normals": len(normals),
        "true_positives": caught,
        "false_positives": flagged_normals,
        "precision": precision,
        "precision_interval": wilson(caught, flagged),
        "recall": recall,
        "recall_interval": wilson(caught, len(loops)),
        "f1": f1,
        "median_delay": percentile(delays, 0.5),
        "p90_delay": percentile(delays, 0.9),
        "false_detections": sum(o.false_detections for o in outcomes),
    }


def detector_rows(outcomes: Sequence[Outcome]) -> list[dict]:
    """Per detector and type: how many of its detections were true, false,
    unlabelled, and the precision of the labelled ones."""
    counts: dict[tuple[str, str], list[int]] = {}
    sessions: dict[tuple[str, str], set[str]] = {}
    for outcome in outcomes:
        for detector, kind, truth in outcome.detections:
            row = counts.setdefault((detector, kind), [0, 0, 0])
            row[0 if truth else 1 if truth is False else 2] += 1
            sessions.setdefault((detector, kind), set()).add(outcome.key)
    rows = []
    for (detector, kind), (true, false, unlabelled) in sorted(counts.items()):
        rows.append(
            {
                "detector": detector,
                "type": kind,
                "sessions": len(sessions[(detector, kind)]),
                "true": true,
                "false": false,
                "unlabelled": unlabelled,
                "precision": true / (true + false) if true + false else None,
                "precision_interval": wilson(true, true + false),
            }
        )
    return rows


class Evaluator:
    """Scores detector sets on streams, caching each detector's run per
    stream and parameter set (shared by every fold's search)."""

    def __init__(self, streams: Sequence[LabelledStream]):
        self.streams = streams
        self._runs: dict[tuple[str, str], list[tuple[Found, ...] | None]] = {}
        # id(params) -> (params, its runs): repr() of a params object costs more
        # than scoring it; holding the object keeps its id from being reused.
        self._by_object: dict[int, tuple[Any, list[tuple[Found, ...] | None]]] = {}

    def _run(self, index: int, detector: str, params: Any) -> tuple[Found, ...]:
        known = self._by_object.get(id(params))
        if known is None or known[0] is not params:
            runs = self._runs.setdefault((detector, repr(params)), [None] * len(self.streams))
            known = self._by_object[id(params)] = (params, runs)
        runs = known[1]
        if runs[index] is None:
            runs[index] = run_detector(self.streams[index], detector, params)
        return runs[index]

    def outcome(self, index: int, detectors: Mapping[str, Any]) -> Outcome:
        stream = self.streams[index]
        found = [f for name, params in detectors.items() for f in self._run(index, name, params)]
        stops = [f.event for f in found if f.stop]
        if stops:  # the consumer cut the stream at the first stop
            found = [f for f in found if f.event <= min(stops)]
        order = {name: i for i, name in enumerate(detectors)}
        found.sort(key=lambda f: (f.event, order[f.detector]))
        truths = [detection_truth(stream, f) for f in found]
        false = sum(1 for t in truths if t is False)
        summary = tuple((f.detector, f.type, t) for f, t in zip(found, truths, strict=True))
        if stream.label == NORMAL:
            return Outcome(stream.key, NORMAL, bool(found), None, false, "", summary)
        first = next((f for f, t in zip(found, truths, strict=True) if t is not False), None)
        if first is None:
            return Outcome(stream.key, LOOP, False, None, false, "", summary)
        delay = max(first.at - stream.loop_starts.get(first.channel, first.start), 0)
        return Outcome(stream.key, LOOP, True, delay, false, first.channel, summary)

    def outcomes(self, detectors: Mapping[str, Any], indices: Sequence[int] | None = None) -> list[Outcome]:
        indices = range(len(self.streams)) if indices is None else indices
        return [self.outcome(i, detectors) for i in indices]


def candidate_values(spec: ParamSpec, current: Any) -> list:
    """The values a search tries for one parameter (the current one left out)."""
    if spec.choices:
        values = list(spec.choices)
    elif isinstance(spec.default, bool):
        values = [False, True]
    elif spec.low is not None and spec.high is not None and spec.step:
        count = int(round((spec.high - spec.low) / spec.step)) + 1
        picks = (
            range(count)
            if count <= MAX_GRID
            else sorted({round(i * (count - 1) / (MAX_GRID - 1)) for i in range(MAX_GRID)})
        )
        values = [spec.low + i * spec.step for i in picks]
        values = [int(v) if isinstance(spec.default, int) else round(float(v), 10) for v in values]
    else:
        values = []
    return [v for v in values if v != current]


def objective(row: dict, fp_budget: int) -> tuple:
    delay = row["median_delay"]
    return (
        max(row["false_positives"] - fp_budget, 0),
        -row["true_positives"],
        row["false_detections"],
        float("inf") if delay is None else delay,
        row["false_positives"],
    )


class Budget:
    """Evaluations and seconds left to a whole tuning run, progress reports
    and the caller's cancel check."""

    def __init__(
        self,
        total: int,
        time_limit: float | None,
        progress: Callable[[int, int], None] | None,
        cancelled: Callable[[], bool] | None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total, self.done, self.clock = total, 0, clock
        self.deadline = None if time_limit is None else clock() + time_limit
        self.progress, self.cancelled = progress, cancelled
        self.timed_out = False

    def out_of_time(self) -> bool:
        if self.deadline is not None and self.clock() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def spend(self) -> None:
        self.done += 1
        self.total = max(self.total, self.done)  # the pruning steps after a search may pass the plan
        if self.progress:
            self.progress(self.done, self.total)
        if self.cancelled and self.cancelled():
            raise TuningCancelled()


@dataclass
class SearchResult:
    detectors: dict[str, Any]
    evaluations: int
    stopped: str  # "converged", "pass limit reached", "candidate budget used" or "time limit reached"


def search_plan(base: Profile, specs: Mapping[str, Sequence[ParamSpec]] | None) -> list[tuple[str, ParamSpec]]:
    if specs is None:
        specs = {name: param_specs(DETECTORS[name].Params) for name in base.detectors}
    return [(name, spec) for name in base.detectors for spec in specs.get(name, ())]


def search(
    evaluator: Evaluator,
    indices: Sequence[int],
    base: Profile,
    plan: Sequence[tuple[str, ParamSpec]],
    budget: Budget,
    *,
    fp_budget: int = 0,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    max_passes: int = DEFAULT_MAX_PASSES,
) -> SearchResult:
    """The best parameters for `base` on the streams at `indices` (module docstring)."""
    current = dict(base.detectors)
    best = objective(metrics_row(evaluator.outcomes(current, indices)), fp_budget)
    done, stopped = 0, "pass limit reached"
    for _ in range(max_passes):
        changed = False
        for name, spec in plan:
            for value in candidate_values(spec, getattr(current[name], spec.name)):
                if done >= max_evaluations:
                    stopped = "candidate budget used"
                    break
                if budget.out_of_time():
                    stopped = "time limit reached"
                    break
                done += 1
                try:
                    params = build_params(DETECTORS[name].Params, {spec.name: value}, name, base=current[name])
                except ConfigError:  # a combination the detector refuses (its own checks)
                    params = None
                if params is not None:
                    trial = {**current, name: params}
                    score = objective(metrics_row(evaluator.outcomes(trial, indices)), fp_budget)
                    if score < best:
                        best, current, changed = score, trial, True
                budget.spend()
        if stopped != "pass limit reached":
            break
        if not changed:
            stopped = "converged"
            break
    # Keep only changes that matter: a parameter whose base value scores as
    # well goes back to it (a later change may have made an earlier one moot).
    for name, spec in plan:
        before = getattr(base.detectors[name], spec.name)
        if getattr(current[name], spec.name) == before or budget.out_of_time():
            continue
        done += 1
        try:
            params = build_params(DETECTORS[name].Params, {spec.name: before}, name, base=current[name])
        except ConfigError:
            params = None
        if params is not None:
            trial = {**current, name: params}
            score = objective(metrics_row(evaluator.outcomes(trial, indices)), fp_budget)
            if score <= best:
                best, current = score, trial
        budget.spend()
    return SearchResult(current, done, stopped)


def fold_of(streams: Sequence[LabelledStream], folds: int) -> list[int]:
    """Each stream's fold: loops and normals dealt out in turn, in order.

    >>> fold_of([LabelledStream(str(i), l, []) for i, l in enumerate("LLNLNN")], 2)
    [0, 1, 0, 0, 1, 0]
    """
    seen = {LOOP: 0, NORMAL: 0}
    out = []
    for stream in streams:
        kind = LOOP if stream.label == LOOP else NORMAL
        out.append(seen[kind] % folds)
        seen[kind] += 1
    return out


def _changes(base: Profile, detectors: Mapping[str, Any], plan: Sequence[tuple[str, ParamSpec]]) -> list[dict]:
    return [
        {"detector": name, "param": spec.name, "before": getattr(base.detectors[name], spec.name), "after": after}
        for name, spec in plan
        if (after := getattr(detectors[name], spec.name)) != getattr(base.detectors[name], spec.name)
    ]


def outcome_change(before: Outcome, after: Outcome) -> str:
    """What changed for one session, in words ("" for nothing)."""
    parts = []
    if before.label == NORMAL:
        if before.flagged != after.flagged:
            parts.append("false positive removed" if before.flagged else "new false positive")
    elif before.flagged != after.flagged:
        parts.append("loop now missed" if before.flagged else "loop now caught")
    elif before.flagged and before.delay != after.delay:
        shift = after.delay - before.delay
        unit = "tool call" if after.channel == "tools" else "character"
        amount = f"{abs(shift):g} {unit}{'' if abs(shift) == 1 else 's'}"
        parts.append(f"caught {amount} later" if shift > 0 else f"caught {amount} earlier")
    if before.false_detections != after.false_detections and before.label == LOOP:
        parts.append(f"false detections {before.false_detections} → {after.false_detections}")
    return "; ".join(parts)


def _outcome_dict(outcome: Outcome) -> dict:
    return {
        "flagged": outcome.flagged,
        "delay": outcome.delay,
        "channel": outcome.channel,
        "false_detections": outcome.false_detections,
    }


@dataclass
class TuningResult:
    profile: Profile  # the base profile with the best parameters found on every session
    changes: list[dict]  # {"detector", "param", "before", "after"}
    before: dict  # metrics_row of the base profile, in-sample
    after: dict  # of the tuned profile, in-sample
    held_out: dict | None  # {"folds", "before", "after", "fold_changes"}; None with fewer than 2 sessions
    sessions: list[dict]  # per session that changes: key, label, base, tuned, held_out, change, held_out_change
    detectors: dict  # {"before": detector_rows, "after": ...} in-sample
    verdict: str  # "unchanged", "improves", "no held-out gain", "loses_recall"
    warnings: list[str]
    evaluations: int
    stopped: str

    def to_dict(self) -> dict:
        return {
            "changes": self.changes,
            "before": self.before,
            "after": self.after,
            "held_out": self.held_out,
            "sessions": self.sessions,
            "detectors": self.detectors,
            "verdict": self.verdict,
            "warnings": self.warnings,
            "evaluations": self.evaluations,
            "stopped": self.stopped,
            "profile": self.profile.to_dict(),
            "detector_order": list(self.profile.detectors),  # a JSON object's key order may not be kept
        }


def _verdict(changes: list[dict], before: dict, held: dict | None) -> str:
    if not changes:
        return "unchanged"
    if held is None:
        return "no held-out gain"
    base, tuned = held["before"], held["after"]
    if (tuned["recall"] or 0) < (base["recall"] or 0):
        return "loses_recall"
    if objective(tuned, 0) < objective(base, 0):
        return "improves"
    return "no held-out gain"


def sample_warnings(streams: Sequence[LabelledStream], min_sessions: int) -> list[str]:
    loops = sum(1 for s in streams if s.label == LOOP)
    normals = len(streams) - loops
    return [
        f"only {count} labelled {kind} session{'s' if count != 1 else ''} (fewer than {min_sessions}): "
        "the figures are uncertain; read them with their intervals"
        for kind, count in (("loop", loops), ("clean", normals))
        if count < min_sessions
    ]


def tune(
    streams: Sequence[LabelledStream],
    base: Profile,
    *,
    folds: int = DEFAULT_FOLDS,
    fp_budget: int = 0,
    specs: Mapping[str, Sequence[ParamSpec]] | None = None,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    max_passes: int = DEFAULT_MAX_PASSES,
    time_limit: float | None = None,
    min_sessions: int = DEFAULT_MIN_SESSIONS,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> TuningResult:
    """Search on every stream, then cross-validate (module docstring).
    `max_evaluations` bounds each of the k+1 searches; `time_limit` (seconds)
    all of them together; `progress(done, total)` after each candidate;
    `cancelled()` true raises TuningCancelled."""
    if not FOLDS_RANGE[0] <= folds <= FOLDS_RANGE[1]:
        raise ValueError(f"folds must be from {FOLDS_RANGE[0]} to {FOLDS_RANGE[1]}, not {folds}")
    plan = search_plan(base, specs)
    per_pass = sum(len(candidate_values(spec, getattr(base.detectors[n], spec.name))) for n, spec in plan)
    k = min(folds, len(streams))
    per_search = min(max_evaluations, per_pass * max_passes)
    budget = Budget(per_search * (1 + (k if k >= 2 else 0)), time_limit, progress, cancelled, clock)
    evaluator = Evaluator(streams)
    everyone = range(len(streams))
    limits = {"fp_budget": fp_budget, "max_evaluations": max_evaluations, "max_passes": max_passes}
    full = search(evaluator, everyone, base, plan, budget, **limits)
    base_outcomes = evaluator.outcomes(base.detectors)
    tuned_outcomes = evaluator.outcomes(full.detectors)
    held_out, held_outcomes = None, None
    stopped = full.stopped
    if k >= 2:
        fold = fold_of(streams, k)
        held_outcomes = [None] * len(streams)
        fold_changes = []
        for f in range(k):
            train = [i for i in everyone if fold[i] != f]
            test = [i for i in everyone if fold[i] == f]
            found = search(evaluator, train, base, plan, budget, **limits)
            if found.stopped == "time limit reached":
                stopped = "time limit reached"
            fold_changes.append(_changes(base, found.detectors, plan))
            for i in test:
                held_outcomes[i] = evaluator.outcome(i, found.detectors)
        held_out = {
            "folds": k,
            "before": metrics_row(base_outcomes),
            "after": metrics_row(held_outcomes),
            "fold_changes": fold_changes,
        }
    if progress:
        progress(budget.total, budget.total)
    sessions = []
    for i, stream in enumerate(streams):
        in_sample = outcome_change(base_outcomes[i], tuned_outcomes[i])
        held = outcome_change(base_outcomes[i], held_outcomes[i]) if held_outcomes else ""
        if in_sample or held:
            sessions.append(
                {
                    "session": stream.key,
                    "model": stream.model,
                    "label": stream.label,
                    "base": _outcome_dict(base_outcomes[i]),
                    "tuned": _outcome_dict(tuned_outcomes[i]),
                    "held_out": _outcome_dict(held_outcomes[i]) if held_outcomes else None,
                    "change": in_sample,
                    "held_out_change": held,
                }
            )
    changes = _changes(base, full.detectors, plan)
    before, after = metrics_row(base_outcomes), metrics_row(tuned_outcomes)
    warnings = sample_warnings(streams, min_sessions)
    if k < 2:
        warnings.append("fewer than 2 labelled sessions: no cross-validation")
    if stopped == "time limit reached":
        warnings.append("the time limit ended the search: the result is the best found by then")
    return TuningResult(
        profile=Profile(
            name=base.name, detectors=full.detectors, models=base.models, description=base.description, version=0
        ),
        changes=changes,
        before=before,
        after=after,
        held_out=held_out,
        sessions=sessions,
        detectors={"before": detector_rows(base_outcomes), "after": detector_rows(tuned_outcomes)},
        verdict=_verdict(changes, before, held_out),
        warnings=warnings,
        evaluations=budget.done,
        stopped=stopped,
    )
