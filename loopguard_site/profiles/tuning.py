"""Threshold search on labelled sessions: a pure function, no Django.

`tune` takes labelled streams (each a session's events with its truth, see
review/truth.py), a base profile and each detector's declared parameters
(`param_specs`), and searches for the parameters that catch the most loop
sessions while flagging at most `fp_budget` clean ones (default none),
ties broken by the smaller median delay, then by fewer flagged clean
sessions; a candidate must be strictly better to replace the current one,
so of equals the earlier (the base first) wins.

Search: coordinate-wise. In each pass, for each enabled detector (profile
order) and each of its tunable parameters (declaration order), try every
candidate value with the others held, and keep the best. Candidates are a
parameter's choices, both values of a flag, or its range by its step,
thinned to at most `MAX_GRID` evenly spaced values. Passes repeat until one
changes nothing, at most `max_passes`; at most `max_evaluations`
candidates are scored in all.

Metrics are replay/metrics.py's, per session: a session is flagged when
any detector fires on it; the delay of a flagged loop session is `at` of
the first detection minus the labelled loop start on its channel (the
detection's own `start` when the channel has none), at least 0.

Cost: the detectors of a profile run independently, so a candidate
re-runs only the detector it changes, and each run stops at the first
detection; results are cached per detector and parameters. One evaluation
costs O(total events) feeds of one detector; memory is one small record
per stream and distinct (detector, parameters) tried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from detector import Monitor
from detector.config import Profile
from detector.params import ConfigError, ParamSpec, build_params, param_specs
from detector.registry import DETECTORS
from loopguard_site.replay.metrics import LabelledOutcome, profile_metrics

MAX_GRID = 9  # values tried per parameter and pass
DEFAULT_MAX_EVALUATIONS = 600
DEFAULT_MAX_PASSES = 3


@dataclass(frozen=True)
class LabelledStream:
    """One labelled session: `label` is "loop" or "normal"."""

    key: str
    label: str
    events: Sequence[dict]
    model: str = ""
    loop_starts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Firing:
    """The first detection of one detector on one stream."""

    event: int  # index of the event whose feed fired it
    at: int
    start: int
    channel: str


def first_firing(stream: LabelledStream, detector: str, params: Any) -> Firing | None:
    monitor = Monitor(Profile(name="tuning", detectors={detector: params}), model=stream.model)
    for index, event in enumerate(stream.events):
        found = monitor.feed(event)
        if found:
            return Firing(index, found[0].at, found[0].start, found[0].channel)
    return None


def metrics_row(outcomes: Sequence[LabelledOutcome]) -> dict:
    """Precision, recall, F1 and delays over the outcomes."""
    m = profile_metrics(outcomes)
    f1 = None
    if m.precision is not None and m.recall is not None and m.precision + m.recall:
        f1 = 2 * m.precision * m.recall / (m.precision + m.recall)
    return {
        "loops": m.loops,
        "normals": m.normals,
        "true_positives": m.true_positives,
        "false_positives": m.false_positives,
        "precision": m.precision,
        "recall": m.recall,
        "f1": f1,
        "median_delay": m.median_delay,
        "p90_delay": m.p90_delay,
    }


class Evaluator:
    """Scores detector sets on the streams, caching each detector's runs."""

    def __init__(self, streams: Sequence[LabelledStream]):
        self.streams = streams
        self._firings: dict[tuple[str, str], list[Firing | None]] = {}

    def _detector_firings(self, detector: str, params: Any) -> list[Firing | None]:
        key = (detector, repr(params))
        if key not in self._firings:
            self._firings[key] = [first_firing(stream, detector, params) for stream in self.streams]
        return self._firings[key]

    def outcomes(self, detectors: Mapping[str, Any]) -> list[LabelledOutcome]:
        runs = [self._detector_firings(name, params) for name, params in detectors.items()]
        outcomes = []
        for index, stream in enumerate(self.streams):
            fired = [(run[index].event, order, run[index]) for order, run in enumerate(runs) if run[index]]
            if not fired:
                outcomes.append(LabelledOutcome(stream.label, False))
                continue
            first = min(fired)[2]
            delay = max(first.at - stream.loop_starts.get(first.channel, first.start), 0)
            outcomes.append(LabelledOutcome(stream.label, True, delay))
        return outcomes


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


def _objective(row: dict, fp_budget: int) -> tuple:
    delay = row["median_delay"]
    return (
        max(row["false_positives"] - fp_budget, 0),
        -row["true_positives"],
        float("inf") if delay is None else delay,
        row["false_positives"],
    )


@dataclass
class TuningResult:
    profile: Profile  # the base profile with the best parameters found
    changes: list[dict]  # {"detector", "param", "before", "after"}
    before: dict  # metrics_row of the base profile
    after: dict
    flips: list[dict]  # {"session", "label", "before", "after"}: flagged or not
    evaluations: int

    def to_dict(self) -> dict:
        return {
            "changes": self.changes,
            "before": self.before,
            "after": self.after,
            "flips": self.flips,
            "evaluations": self.evaluations,
            "profile": self.profile.to_dict(),
            "detector_order": list(self.profile.detectors),  # a JSON object's key order may not be kept
        }


def tune(
    streams: Sequence[LabelledStream],
    base: Profile,
    *,
    fp_budget: int = 0,
    specs: Mapping[str, Sequence[ParamSpec]] | None = None,
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
    max_passes: int = DEFAULT_MAX_PASSES,
    progress: Callable[[int, int], None] | None = None,
) -> TuningResult:
    """The best parameters for `base` on the streams (see the module docstring)."""
    if specs is None:
        specs = {name: param_specs(DETECTORS[name].Params) for name in base.detectors}
    plan = [(name, spec) for name in base.detectors for spec in specs.get(name, ())]
    per_pass = sum(len(candidate_values(spec, getattr(base.detectors[name], spec.name))) for name, spec in plan)
    total = min(max_evaluations, per_pass * max_passes)
    evaluator = Evaluator(streams)
    current = dict(base.detectors)
    start_outcomes = evaluator.outcomes(current)
    best = _objective(metrics_row(start_outcomes), fp_budget)
    done = 0
    for _ in range(max_passes):
        changed = False
        for name, spec in plan:
            for value in candidate_values(spec, getattr(current[name], spec.name)):
                if done >= max_evaluations:
                    break
                done += 1
                try:
                    params = build_params(DETECTORS[name].Params, {spec.name: value}, name, base=current[name])
                except ConfigError:  # a combination the detector refuses (its own checks)
                    params = None
                if params is not None:
                    trial = {**current, name: params}
                    score = _objective(metrics_row(evaluator.outcomes(trial)), fp_budget)
                    if score < best:
                        best, current, changed = score, trial, True
                if progress:
                    progress(done, total)
        if not changed or done >= max_evaluations:
            break
    if progress:
        progress(total, total)
    end_outcomes = evaluator.outcomes(current)
    changes = [
        {"detector": name, "param": spec.name, "before": getattr(base.detectors[name], spec.name), "after": after}
        for name, spec in plan
        if (after := getattr(current[name], spec.name)) != getattr(base.detectors[name], spec.name)
    ]
    flips = [
        {"session": stream.key, "label": stream.label, "before": a.flagged, "after": b.flagged}
        for stream, a, b in zip(streams, start_outcomes, end_outcomes, strict=True)
        if a.flagged != b.flagged
    ]
    return TuningResult(
        profile=Profile(
            name=base.name, detectors=current, models=base.models, description=base.description, version=base.version
        ),
        changes=changes,
        before=metrics_row(start_outcomes),
        after=metrics_row(end_outcomes),
        flips=flips,
        evaluations=done,
    )
