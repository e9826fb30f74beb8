"""`loopguard tune` and the round trip: tune on one model's rows, then
`scan --config` and `eval --config` select the tuned profile by model and
`default` for another model; bad input exits 2 naming the file and line."""

from __future__ import annotations

import json

from detector.cli import main
from detector.config import load_config
from detector.evaluation import read_corpus, row_events
from tests.tuning_rows import two_model_rows, write_rows


def events_file(path, row) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in row_events(row)), encoding="utf-8")
    return str(path)


def test_tune_then_scan_and_eval_select_the_tuned_profile_by_model(tmp_path, capsys):
    rows_path = write_rows(tmp_path / "rows.jsonl", two_model_rows())
    out = tmp_path / "tuned.toml"
    assert main(["tune", rows_path, "--model", "qwen3-*", "--folds", "3", "-o", str(out)]) == 0
    report = capsys.readouterr().out
    assert report.splitlines()[0] == "tuned default for models 'qwen3-*' on 6 labelled rows: improves"
    assert "  tool_dedup.min_occurrences: 3 -> 4" in report
    assert "tuned, held-out (3)" in report
    assert "qwen3-8b-search-0 (normal): false positive removed | false positive removed" in report

    config = load_config(out)
    assert list(config.profiles)[0] == "tuned"
    tuned = config.profiles["tuned"]
    assert tuned.models == ("qwen3-*",)
    assert tuned.detectors["tool_dedup"].min_occurrences == 4

    rows = {row.id: row for row in read_corpus(rows_path)}
    qwen = events_file(tmp_path / "qwen.jsonl", rows["qwen3-8b-search-0"])
    llama = events_file(tmp_path / "llama.jsonl", rows["llama-3-8b-search-0"])
    assert main(["scan", "--config", str(out), "--json", qwen]) == 0  # the false positive is gone
    assert json.loads(capsys.readouterr().out)["profile"] == "tuned"
    assert main(["scan", "--config", str(out), "--json", llama]) == 0
    assert json.loads(capsys.readouterr().out)["profile"] == "default"
    # The same qwen3 session under the built-in default is flagged.
    assert main(["scan", "--json", qwen]) == 1
    capsys.readouterr()

    assert main(["eval", rows_path, "--config", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["profile"] == "by model (tuned: 6 rows, default: 6 rows)"
    assert report["corpora"][0]["overall"]["false_alarm_ids"] == []
    assert main(["eval", rows_path, "--config", str(out), "--profile", "default", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["corpora"][0]["overall"]["false_alarm_ids"] == [f"qwen3-8b-search-{i}" for i in range(3)]


def test_tune_writes_json_by_suffix_and_prints_json(tmp_path, capsys):
    rows_path = write_rows(tmp_path / "rows.jsonl", two_model_rows())
    out = tmp_path / "tuned.json"
    args = ["tune", rows_path, "--model", "QWEN3-*", "--folds", "2", "--name", "qwen-tuned", "--json", "-o", str(out)]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["held_out"]["folds"] == 2
    assert json.loads(out.read_text())["profiles"]["qwen-tuned"]["models"] == ["QWEN3-*"]
    assert load_config(out).select(model="qwen3-32b").name == "qwen-tuned"


def test_tune_refuses_bad_input(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "label": "loop"}\n', encoding="utf-8")
    assert main(["tune", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"loopguard tune: {bad}: line 1: field 'channel'")
    rows_path = write_rows(tmp_path / "rows.jsonl", two_model_rows())
    assert main(["tune", rows_path, "--model", "gpt-*"]) == 2
    assert "no row's model matches 'gpt-*' (12 rows read)" in capsys.readouterr().err
    assert main(["tune", rows_path, "--folds", "1"]) == 2
    assert "folds must be from 2 to 10" in capsys.readouterr().err
    out = tmp_path / "never.toml"
    assert main(["tune", rows_path, "--base", "nope", "-o", str(out)]) == 2
    assert "profile 'nope' is not defined" in capsys.readouterr().err
    assert not out.exists()
