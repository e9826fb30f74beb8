"""Small labelled corpus rows for the tuning tests (the schema of
`loopguard eval`), built here so no test needs data from outside the repository.

`agent_row(n)`: an agent that searches for the same thing `n` times, a
different file read between searches. The built-in `tool_dedup` fires on the
third search (its `min_occurrences` is 3): on a row labelled normal that is
a false positive; raising the threshold to 4 removes it. `looping_row`: an
agent that reads one file over and over (a loop `tool_repetition` catches
at its third consecutive call whatever `tool_dedup` does).
"""

from __future__ import annotations

import json


def _calls(*calls: tuple[str, dict]) -> str:
    return "\n".join(json.dumps({"name": name, "args": args}) for name, args in calls)


def agent_calls(searches: int) -> str:
    calls = []
    for i in range(searches):
        calls += [("search", {"q": "flight to Paris"}), ("read_file", {"path": f"notes/{i}.md"})]
    return _calls(*calls)


def agent_row(row_id: str, searches: int, label: str, model: str) -> dict:
    row = {"id": row_id, "label": label, "channel": "tool_calls", "model": model, "text": agent_calls(searches)}
    if label == "loop":
        row["loop_start"] = 0
    return row


def looping_row(row_id: str, model: str, reads: int = 8) -> dict:
    """Two searches, then the same read `reads` times in a row (the loop starts at the third call)."""
    prefix = _calls(("search", {"q": "a"}), ("search", {"q": "b"})) + "\n"
    text = prefix + _calls(*[("read_file", {"path": "main.py"})] * reads)
    return {"id": row_id, "label": "loop", "channel": "tool_calls", "model": model, "text": text,
            "loop_start": len(prefix)}  # fmt: skip


def two_model_rows() -> list[dict]:
    """qwen3 agents whose repeated searches the default flags (false
    positives) and which loop otherwise; llama agents that search twice
    (nothing fires) and loop the same way."""
    rows = []
    for model, searches in (("qwen3-8b", 3), ("llama-3-8b", 2)):
        rows += [agent_row(f"{model}-search-{i}", searches, "normal", model) for i in range(3)]
        rows += [looping_row(f"{model}-loop-{i}", model, reads=6 + i) for i in range(3)]
    return rows


def write_rows(path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)
