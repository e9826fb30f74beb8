"""`loopguard eval CORPUS.jsonl [CORPUS.jsonl ...] [--profile NAME] [--config FILE] [--json]`

Runs a profile over labelled corpus files (with `--config` and no
`--profile`, each row runs the profile of the file its model selects) and prints recall, false-positive
rate, median and 90th-percentile delay, per row channel, with the ids of
misses, false alarms and early alarms (definitions in `detector.evaluation`).
Exit status 0; 2 on bad input (the message names the file and line).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..chat_client import judge_client_for
from ..config import Config, ConfigError, Profile, builtin_config, load_config
from ..evaluation import CorpusError, CorpusRow, CorpusScore, Score, percentile, read_corpus, score_rows

HELP = "score a profile on labelled corpus files (recall, false-positive rate, delay)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "corpus",
        nargs="+",
        metavar="CORPUS.jsonl",
        help="labelled corpus files, plain or gzip-compressed (schema: fixtures/corpus/README.md)",
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="profile name (default: with --config, the one each row's model selects; else 'default')",
    )
    parser.add_argument("--config", default=None, metavar="FILE", help="TOML or JSON config holding the profile")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def _fmt(value: float | None, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "ratio":
        return f"{value:.3f}"
    if kind == "percent":
        return f"{100 * value:.2f}%"
    return f"{value:,.0f}"


def _table_lines(name: str, score: Score) -> str:
    return (
        f"  {name:<11} {score.hits:>5}/{score.loops:<5} {_fmt(score.recall, 'ratio'):>7}"
        f" {score.false_alarms:>5}/{score.normals:<6} {_fmt(score.false_positive_rate, 'percent'):>8}"
        f" {_fmt(percentile(score.delays, 0.5), 'num'):>8} {_fmt(percentile(score.delays, 0.9), 'num'):>8}"
    )


def _ids(label: str, ids: list[str]) -> list[str]:
    if not ids:
        return []
    # ids come from the corpus file: show them escaped, one list per line.
    return [f"  {label} ({len(ids)}): " + ", ".join(json.dumps(i, ensure_ascii=False)[1:-1] for i in ids)]


def format_report(profile_name: str, scores: list[CorpusScore]) -> str:
    lines = [f"profile: {profile_name}"]
    header = (
        f"  {'rows':<11} {'hits/loops':>11} {'recall':>7} {'fp/normals':>12} {'fp rate':>8} {'median':>8} {'p90':>8}"
    )
    for score in scores:
        lines += ["", score.path, header]
        lines.append(_table_lines("all", score.overall))
        for channel, part in score.channels.items():
            lines.append(_table_lines(channel, part))
        lines += _ids("misses", score.overall.misses)
        lines += _ids("false alarms", score.overall.false_alarm_ids)
        lines += _ids("early alarms", score.overall.early_alarm_ids)
        lines += _ids("early hits (caught before the labelled start)", score.overall.early_hit_ids)
    lines += [
        "",
        "delay: characters from loop_start to the first detection at or after it;",
        "'all' counts text rows only, tool_calls rows count calls",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        config: Config = load_config(args.config) if args.config else builtin_config()
        corpora = [(path, read_corpus(path)) for path in args.corpus]
        if args.config and not args.profile:
            used: dict[str, int] = {}
            name = "by model"

            def profile(row: CorpusRow) -> Profile:
                chosen = config.select(model=row.model)
                used[chosen.name] = used.get(chosen.name, 0) + 1
                return chosen

        else:
            profile = config.select(args.profile or "default")
            name = profile.name
        scores = [score_rows(path, rows, profile, judge_client_for=judge_client_for) for path, rows in corpora]
    except (ConfigError, CorpusError) as exc:
        print(f"loopguard eval: {exc}", file=sys.stderr)
        return 2
    if name == "by model":
        name = "by model (" + ", ".join(f"{p}: {n} rows" for p, n in used.items()) + ")"
    if args.json:
        print(json.dumps({"profile": name, "corpora": [s.to_dict() for s in scores]}, ensure_ascii=False))
    else:
        print(format_report(name, scores))
    return 0
