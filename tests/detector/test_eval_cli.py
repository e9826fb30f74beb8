"""`loopguard eval`: metrics on a small crafted corpus, several files in one
run, how rows become events, and bad input (exit 2 naming file and line)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from detector.cli import main
from detector.evaluation import CorpusRow, read_corpus, row_events, same_loop

ROWS = [
    # A 2-character loop from offset 7: found at its 20th copy (20 letters), 47, delay 40.
    {"id": "loop-caught", "label": "loop", "channel": "content", "model": "m", "text": "Intro. " + "思考" * 40,
     "loop_start": 7, "loop_unit": "思考"},
    {"id": "loop-missed", "label": "loop", "channel": "reasoning", "model": "m", "text": "Just a short reply.",
     "loop_start": 0, "loop_unit": "Just"},
    # "ha" loops first (an early alarm at 40), then the labelled loop from 86, found at 126, delay 40.
    {"id": "loop-early", "label": "loop", "channel": "content", "model": "m",
     "text": "ha" * 40 + "Then. " + "思考" * 40, "loop_start": 86, "loop_unit": "思考"},
    {"id": "normal-quiet", "label": "normal", "channel": "content", "model": "m",
     "text": "Hello world. Everything is fine.", "loop_start": None, "loop_unit": ""},
    {"id": "normal-laughing", "label": "normal", "channel": "reasoning", "model": "m", "text": "ha" * 50,
     "loop_start": None, "loop_unit": ""},
]  # fmt: skip


def write_corpus(path, rows) -> str:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_metrics_on_a_crafted_corpus(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "crafted.jsonl", ROWS)
    assert main(["eval", corpus, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["profile"] == "default"
    (score,) = report["corpora"]
    assert score["path"] == corpus
    assert score["overall"] == {
        "loops": 3,
        "hits": 2,
        "recall": 2 / 3,
        "normals": 2,
        "false_alarms": 1,
        "false_positive_rate": 0.5,
        "median_delay": 40,
        "p90_delay": 40,
        "misses": ["loop-missed"],
        "false_alarm_ids": ["normal-laughing"],
        "early_alarm_ids": ["loop-early"],
        "early_hit_ids": [],
    }
    channels = {
        name: (part["loops"], part["hits"], part["normals"], part["false_alarms"], part["median_delay"])
        for name, part in score["channels"].items()
    }
    assert channels == {"reasoning": (1, 0, 1, 1, None), "content": (2, 2, 1, 0, 40)}


def test_table_output(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "crafted.jsonl", ROWS)
    assert main(["eval", corpus, "--profile", "default"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "profile: default"
    assert out[3:6] == [
        "  rows         hits/loops  recall   fp/normals  fp rate   median      p90",
        "  all             2/3       0.667     1/2        50.00%       40       40",
        "  reasoning       0/1       0.000     1/1       100.00%        -        -",
    ]
    assert "  misses (1): loop-missed" in out
    assert "  false alarms (1): normal-laughing" in out
    assert "  early alarms (1): loop-early" in out


def test_several_files_in_one_run(tmp_path, capsys):
    first = write_corpus(tmp_path / "a.jsonl", ROWS[:2])
    second = write_corpus(tmp_path / "b.jsonl", ROWS[3:])
    assert main(["eval", first, second, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(c["path"], c["overall"]["loops"], c["overall"]["normals"]) for c in report["corpora"]] == [
        (first, 2, 0),
        (second, 0, 2),
    ]


def test_profile_from_a_config_file(tmp_path, capsys):
    config = tmp_path / "profiles.toml"
    config.write_text("[profiles.lenient]\n[profiles.lenient.text_loop]\nunit_region_chars = 160\n", encoding="utf-8")
    corpus = write_corpus(tmp_path / "crafted.jsonl", ROWS)
    assert main(["eval", corpus, "--config", str(config), "--profile", "lenient", "--json"]) == 0
    overall = json.loads(capsys.readouterr().out)["corpora"][0]["overall"]
    # Neither "思考" run reaches 160 characters (76 and 80).
    assert (overall["hits"], overall["misses"]) == (0, ["loop-caught", "loop-missed", "loop-early"])


def test_rows_become_events():
    text_row = CorpusRow("r", "loop", "reasoning", "model-x", "abcdefghij", 0, "abc", "f", 1)
    assert list(row_events(text_row)) == [
        {"type": "session", "id": "r", "model": "model-x"},
        {"type": "turn"},
        {"type": "reasoning", "text": "abcd"},
        {"type": "reasoning", "text": "efgh"},
        {"type": "reasoning", "text": "ij"},
        {"type": "finish"},
    ]
    calls = '{"name": "Read", "args": {"path": "a"}}\n{"name": "Grep", "args": "x", "ok": false, "output": "no"}\n'
    tool_row = CorpusRow("t", "normal", "tool_calls", "", calls, None, "", "f", 2)
    assert list(row_events(tool_row)) == [
        {"type": "session", "id": "t", "model": ""},
        {"type": "turn"},
        {"type": "tool_call", "name": "Read", "args": {"path": "a"}},
        {"type": "tool_call", "name": "Grep", "args": {"_raw": "x"}},
        {"type": "tool_result", "ok": False, "output": "no"},
        {"type": "finish"},
    ]


def test_same_loop_ignores_numbers_rotation_and_multiples():
    assert same_loop("4. Agile\n", "99. Agile\n1")
    assert same_loop("ab ab ", "ab ")
    assert not same_loop("ab ", "abc ")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "label": "loop"'], "line 1: invalid JSON"),
        ([json.dumps(ROWS[3]), "[1, 2]"], "line 2: a row must be a JSON object"),
        ([json.dumps({**ROWS[0], "loop_start": None})], "line 1: field 'loop_start' of a loop row must be an offset"),
        ([json.dumps({**ROWS[0], "loop_start": 999})], "line 1: field 'loop_start' of a loop row must be an offset"),
        ([json.dumps({**ROWS[3], "channel": "tools"})], "line 1: field 'channel' must be one of"),
        ([json.dumps({**ROWS[3], "label": "maybe"})], "line 1: field 'label' must be one of"),
        ([json.dumps(ROWS[3]), json.dumps({**ROWS[3], "text": 5})], "line 2: field 'text' must be a string"),
        (
            [json.dumps({**ROWS[3], "channel": "tool_calls", "text": '{"name": "a"}\nnot json'})],
            "line 1: tool call 2: invalid JSON",
        ),
    ],
)
def test_bad_corpus_line_exits_2_naming_file_and_line(tmp_path, capsys, lines, message):
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["eval", str(corpus)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"loopguard eval: {corpus}: {message}" in captured.err


def test_missing_file_exits_2(tmp_path, capsys):
    missing = tmp_path / "missing.jsonl"
    assert main(["eval", str(missing)]) == 2
    assert f"{missing}: cannot read" in capsys.readouterr().err


def test_read_corpus_keeps_row_lines(tmp_path):
    corpus = write_corpus(tmp_path / "crafted.jsonl", ROWS)
    assert [(row.id, row.line) for row in read_corpus(corpus)][:2] == [("loop-caught", 1), ("loop-missed", 2)]


def test_a_gzip_compressed_corpus_reads_as_the_plain_one(tmp_path):
    plain = write_corpus(tmp_path / "crafted.jsonl", ROWS)
    packed = tmp_path / "crafted.jsonl.gz"
    packed.write_bytes(gzip.compress(Path(plain).read_bytes()))
    rows = read_corpus(packed)
    assert [(row.id, row.line, row.text) for row in rows] == [(r.id, r.line, r.text) for r in read_corpus(plain)]
    assert len(rows) == len(ROWS)


def test_a_gz_file_that_is_not_gzip_exits_2_naming_it(tmp_path, capsys):
    fake = tmp_path / "plain.jsonl.gz"
    fake.write_text(json.dumps(ROWS[3]) + "\n", encoding="utf-8")
    assert main(["eval", str(fake)]) == 2
    assert f"loopguard eval: {fake}: cannot read: Not a gzipped file" in capsys.readouterr().err
