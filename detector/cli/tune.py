"""`loopguard tune ROWS.jsonl [--base PROFILE] [--config FILE] [--model GLOB]
[--folds K] [--max-evaluations N] [--time-limit S] [--fp-budget N] [--name NAME]
[-o FILE] [--json]`

Tunes a profile on labelled corpus rows (the schema of `loopguard eval`)
whose model matches GLOB, with the search and cross-validation of
`detector.tuning`, and prints the base and tuned figures in-sample and on
held-out folds. `-o FILE` writes the tuned profile (TOML, or JSON when FILE
ends in .json) selected by GLOB: `loopguard scan --config FILE` and
`loopguard eval --config FILE` then pick it for those models only.
Exit status 0; 2 on bad input (the message names the file and line).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import sys
from pathlib import Path

from ..config import Config, ConfigError, builtin_config, dump_config, load_config
from ..evaluation import CorpusError, read_corpus
from ..tuning import DEFAULT_FOLDS, DEFAULT_MAX_EVALUATIONS, DEFAULT_MIN_SESSIONS, stream_from_row, tune

HELP = "tune a profile's thresholds on labelled corpus rows, cross-validated, and write it for a model glob"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rows", nargs="+", metavar="ROWS.jsonl", help="labelled corpus files (loopguard eval's rows)")
    parser.add_argument("--base", default="default", metavar="PROFILE", help="profile to start from (default: default)")
    parser.add_argument("--config", default=None, metavar="FILE", help="TOML or JSON config holding the base profile")
    parser.add_argument("--model", default="*", metavar="GLOB", help="tune on rows whose model matches (default: *)")
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS, metavar="K", help="cross-validation folds, 2-10")
    parser.add_argument(
        "--max-evaluations", type=int, default=DEFAULT_MAX_EVALUATIONS, metavar="N", help="candidates per search"
    )
    parser.add_argument("--time-limit", type=float, default=None, metavar="S", help="seconds for the whole run")
    parser.add_argument("--fp-budget", type=int, default=0, metavar="N", help="clean rows the tuned profile may flag")
    parser.add_argument(
        "--min-sessions", type=int, default=DEFAULT_MIN_SESSIONS, metavar="N", help="warn below N loop or clean rows"
    )
    parser.add_argument("--name", default="tuned", help="name of the tuned profile in FILE (default: tuned)")
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="write the tuned profile here")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(interval) -> str:
    return "" if not interval else f" [{interval[0]:.2f}-{interval[1]:.2f}]"


def _row(name: str, m: dict) -> str:
    delay = "-" if m["median_delay"] is None else f"{m['median_delay']:,.0f}"
    return (
        f"  {name:<20} {_ratio(m['precision']):>9}{_interval(m['precision_interval']):<12}"
        f" {_ratio(m['recall']):>7}{_interval(m['recall_interval']):<12}"
        f" {m['true_positives']:>4}/{m['loops']:<4} {m['false_positives']:>4}/{m['normals']:<4}"
        f" {m['false_detections']:>6} {delay:>8}"
    )


def format_report(base: str, glob: str, count: int, result: dict) -> str:
    lines = [f"tuned {base} for models {glob!r} on {count} labelled rows: {result['verdict']}"]
    lines += [f"  warning: {w}" for w in result["warnings"]]
    header = (
        f"  {'':<20} {'precision':>9}{'':<12} {'recall':>7}{'':<12} {'caught':>9} {'flagged':>9}"
        f" {'false':>6} {'median':>8}"
    )
    lines += ["", header, _row("base, in-sample", result["before"]), _row("tuned, in-sample", result["after"])]
    held = result["held_out"]
    if held:
        lines.append(_row(f"base, held-out ({held['folds']})", held["before"]))
        lines.append(_row(f"tuned, held-out ({held['folds']})", held["after"]))
    lines += ["", "changes:"]
    lines += [f"  {c['detector']}.{c['param']}: {c['before']} -> {c['after']}" for c in result["changes"]] or ["  none"]
    changed = [s for s in result["sessions"] if s["held_out_change"] or s["change"]]
    if changed:
        lines += ["", "rows that change (held-out | in-sample):"]
        for s in changed:
            shown = json.dumps(s["session"], ensure_ascii=False)[1:-1]
            lines.append(f"  {shown} ({s['label']}): {s['held_out_change'] or '-'} | {s['change'] or '-'}")
    lines += [
        "",
        "precision and recall per session with Wilson 95% intervals; 'false': detections labelled",
        f"or implied false; delay in characters (tool calls on tool rows); {result['evaluations']} candidates"
        f" scored, search ended: {result['stopped']}",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        config: Config = load_config(args.config) if args.config else builtin_config()
        base = config.select(args.base)
        rows = [row for path in args.rows for row in read_corpus(path)]
        chosen = [r for r in rows if fnmatch.fnmatchcase(r.model.lower(), args.model.lower())]
        if not chosen:
            raise CorpusError(f"no row's model matches {args.model!r} ({len(rows)} rows read)")
        result = tune(
            [stream_from_row(row) for row in chosen],
            base,
            folds=args.folds,
            fp_budget=args.fp_budget,
            max_evaluations=args.max_evaluations,
            time_limit=args.time_limit,
            min_sessions=args.min_sessions,
        )
        tuned = dataclasses.replace(
            result.profile,
            name=args.name,
            models=(args.model,),
            description=f"tuned from {base.name} by loopguard tune on {len(chosen)} labelled rows",
        )
        if args.output:
            fmt = "json" if Path(args.output).suffix.lower() == ".json" else "toml"
            text = dump_config(Config({args.name: tuned}), fmt)
            Path(args.output).write_text(text, encoding="utf-8")
    except (ConfigError, CorpusError, ValueError, OSError) as exc:
        print(f"loopguard tune: {exc}", file=sys.stderr)
        return 2
    data = result.to_dict()
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    else:
        print(format_report(base.name, args.model, len(chosen), data))
    return 0
