"""Synthetic texts for the text-loop detectors (issue 19): generators of
realistic loops by class (19.1 a-e) and of legitimate texts that must stay
quiet (19.2), each drawn from a seeded `random.Random`, so a case is the same
on every run and a class has as many variants as there are seeds.

A generator returns `Case(text, loop_start, channel)`; `loop_start` is the
offset of the loop's first copy (None for a quiet text). Used by
tests/detector/test_synthetic_classes.py and by bench/accuracy.py's
per-class table.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple


class Case(NamedTuple):
    text: str
    loop_start: int | None
    channel: str = "content"


def _pick(rng: random.Random, items, k: int | None = None):
    return rng.choice(items) if k is None else rng.sample(items, k)


INTROS = [
    "Sure, here is the result you asked for.\n\n",
    "Let me work through this step by step.\n\n",
    "Here is what I found after looking at the data.\n\n",
    "Okay, so the user wants a complete answer. Let me write it out.\n\n",
    "好的，下面是完整的结果。\n\n",
]

WORDS = (
    "data model value table column sheet user order price total count score result index range cell item "
    "record field name state config server client request response buffer stream token layer weight"
).split()


def _identifier(rng: random.Random) -> str:
    return rng.choice(WORDS) + rng.choice(["", "_", ""]) + rng.choice(WORDS).capitalize()


# -- 19.1 a: units without whitespace, 36 to 200 characters ---------------------------------


def _formula(rng: random.Random) -> str:
    col = lambda: rng.choice("ABCDEFGH")  # noqa: E731
    row = lambda: str(rng.randint(1, 400))  # noqa: E731
    parts = [
        f"SUM({col()}{row()}:{col()}{row()})",
        f"VLOOKUP({col()}{row()},Sheet{rng.randint(1, 9)}!{col()}:{col()},{rng.randint(2, 6)},FALSE)",
        f"IF({col()}{row()}>{rng.randint(0, 99)},{col()}{row()}*{rng.randint(2, 9)},0)",
        f"INDEX({col()}:{col()},MATCH({col()}{row()},{col()}:{col()},0))",
        f"ROUND({col()}{row()}/{col()}{row()},{rng.randint(0, 3)})",
    ]
    return "=" + "+".join(rng.sample(parts, rng.randint(1, 4)))


def _call_chain(rng: random.Random) -> str:
    calls = [f"{_identifier(rng)}({rng.choice(['', 'x', 'i', '0', 'self', 'None'])})" for _ in range(rng.randint(2, 7))]
    return ".".join([rng.choice(["self", "df", "app", "ctx", "np"])] + calls) + rng.choice([";", "", ","])


def _nested_call(rng: random.Random) -> str:
    depth = rng.randint(3, 8)
    names = [_identifier(rng) for _ in range(depth)]
    return "".join(f"{n}(" for n in names) + "x" + ")" * depth + rng.choice([";", ",", ""])


def long_token_units(rng: random.Random) -> Case:
    for _ in range(100):
        unit = rng.choice([_formula, _call_chain, _nested_call])(rng)
        if 36 <= len(unit) <= 200:
            break
    while len(unit) < 36:
        unit += "+" + _formula(rng)[1:]
    unit = unit[:200]
    intro = rng.choice(INTROS) + rng.choice(["The formula is:\n", "Use this expression:\n", "```\n", ""])
    copies = rng.randint(6, 20)
    return Case(intro + unit * copies, len(intro))


# -- 19.1 b: a paragraph of many short clauses, 1,000 to 3,000 characters, repeated ----------

CLAUSES = [
    "check the input",
    "validate the schema",
    "log the request",
    "open the connection",
    "read the header",
    "parse the body",
    "update the cache",
    "write the record",
    "close the file",
    "notify the user",
    "retry on failure",
    "compute the total",
    "sort the rows",
    "drop the duplicates",
    "merge the tables",
    "save the result",
    "free the buffer",
    "flush the queue",
    "reset the timer",
    "send the reply",
    "检查输入",
    "验证格式",
    "记录日志",
    "更新缓存",
    "写入数据库",
    "通知用户",
]


def long_clause_paragraphs(rng: random.Random) -> Case:
    separator = rng.choice([", ", "\n", "; ", "，"])
    target = rng.randint(1000, 3000)
    clauses: list[str] = []
    while sum(len(c) + len(separator) for c in clauses) < target:
        clause = rng.choice(CLAUSES)
        if rng.random() < 0.5:
            clause = f"{clause} {rng.choice(['again', 'first', 'then', 'now', 'once more', 'carefully'])}"
        clauses.append(clause)
    paragraph = separator.join(clauses) + (".\n" if separator != "\n" else "\n")
    intro = rng.choice(INTROS)
    return Case(intro + paragraph * rng.randint(3, 5), len(intro))


# -- 19.1 c: template cycles whose numbers do not step evenly ------------------------------

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SUBJECTS = ["Math", "Physics", "History", "Chemistry", "English", "Biology", "Art"]


def _timetable(rng: random.Random) -> tuple[str, str]:
    days = rng.sample(DAYS, rng.randint(2, 4))
    subjects = rng.sample(SUBJECTS, rng.randint(2, 3))
    hours = list(range(8, 17))

    def copy() -> str:
        lines = []
        for day in days:
            times = sorted(rng.sample(hours, len(subjects)))
            slots = ", ".join(
                f"{s} at {h}:{rng.choice(['00', '15', '30', '45'])}" for s, h in zip(subjects, times, strict=True)
            )
            lines.append(f"{day}: {slots}\n")
        return "".join(lines)

    return "Here is the weekly timetable:\n\n", copy


def _training_plan(rng: random.Random) -> tuple[str, str]:
    activities = rng.sample(["Warm-up jog", "Intervals", "Tempo run", "Stretching", "Core work", "Cool-down walk"], 3)
    week = [0]

    def copy() -> str:
        week[0] += 1
        parts = [f"Week {week[0]}:\n"]
        for activity in activities:
            parts.append(f"- {activity}: {rng.choice([10, 15, 20, 25, 30, 35, 40, 45])} minutes\n")
        return "".join(parts)

    return "Training plan for the next months:\n\n", copy


def _number_grid(rng: random.Random) -> tuple[str, str]:
    size = rng.randint(3, 5)

    def copy() -> str:
        rows = [f"Row {r + 1}: " + " ".join(str(rng.randint(1, 9)) for _ in range(size)) + "\n" for r in range(size)]
        return "".join(rows) + "\n"

    return "Let me fill the grid again.\n\n", copy


def _emphasis_list(rng: random.Random) -> tuple[str, str]:
    marks = rng.choice(["**{n}.** ", "## {n}. ", "### {n}. ", "**{n}. "])
    items = rng.sample(
        ["Review the requirements", "Draft the outline", "Check the sources", "Write the summary", "Test the code"],
        rng.randint(1, 3),
    )
    n = [0]

    def copy() -> str:
        out = []
        for item in items:
            n[0] += 1
            tail = "**" if marks.startswith("**{n}. ") and not marks.startswith("**{n}.**") else ""
            out.append(marks.format(n=n[0]) + item + tail + "\n")
        return "".join(out)

    return "The steps:\n\n", copy


def _one_letter_blocks(rng: random.Random) -> tuple[str, str]:
    letter = rng.choice("xyzn")

    def copy() -> str:
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        return f"{letter} = {a}\n{letter} + {b} = {a + b}\n{letter} * 2 = {2 * a}\n"

    return "Trying values:\n", copy


TEMPLATES = [_timetable, _training_plan, _number_grid, _emphasis_list, _one_letter_blocks]


def template_cycles(rng: random.Random) -> Case:
    intro, copy = rng.choice(TEMPLATES)(rng)
    lead = rng.choice(INTROS[:4]) + intro
    return Case(lead + "".join(copy() for _ in range(rng.randint(12, 30))), len(lead))


# -- 19.1 d: near-duplicate (paraphrase) loops, English and Chinese -------------------------

EN_PARAGRAPHS = [
    "I need to make sure the answer covers every case the user mentioned, so let me go back over the "
    "requirements once more and check that the function handles empty input, negative numbers and very "
    "large values without losing precision.",
    "The main problem here is that the cache is invalidated too early, which means every request goes "
    "to the database again and the latency grows with the number of users connected at the same time.",
    "To solve this we could split the work into smaller batches, process each batch in its own worker and "
    "then merge the partial results at the end, which keeps the memory use flat even for large inputs.",
]
EN_SWAPS = {
    "make sure": ["ensure", "check", "confirm"],
    "every": ["each", "all of every", "any"],
    "once more": ["again", "one more time", "another time"],
    "handles": ["deals with", "covers", "copes with"],
    "main": ["key", "central", "core"],
    "too early": ["too soon", "prematurely", "early"],
    "grows": ["increases", "rises", "climbs"],
    "smaller": ["small", "tiny", "little"],
    "merge": ["combine", "join", "gather"],
    "flat": ["low", "steady", "bounded"],
    "large": ["big", "huge", "long"],
}
ZH_PARAGRAPHS = [
    "我需要再检查一下这个函数是否正确处理了空输入、负数以及非常大的数值，确保结果不会丢失精度，然后再给出最终的答案。",
    "问题的关键在于缓存失效得太早，每一个请求都会重新访问数据库，导致延迟随着同时在线的用户数量不断增加。",
    "为了解决这个问题，我们可以把任务拆分成更小的批次，每个批次交给单独的进程处理，最后再把部分结果合并起来。",
]
ZH_SWAPS = {
    "再检查": ["重新检查", "再核对", "再确认"],
    "正确": ["准确", "妥善", "正确地"],
    "最终": ["最后", "完整", "正式"],
    "关键": ["核心", "重点", "要害"],
    "太早": ["过早", "太快", "提前"],
    "不断": ["持续", "一直", "逐渐"],
    "拆分": ["分割", "切分", "划分"],
    "单独": ["独立", "各自", "专门"],
    "合并": ["汇总", "整合", "组合"],
}


def _paraphrase(rng: random.Random, text: str, swaps: dict[str, list[str]], changes: int) -> str:
    keys = [k for k in swaps if k in text]
    for key in rng.sample(keys, min(changes, len(keys))):
        text = text.replace(key, rng.choice(swaps[key]), 1)
    return text


def near_duplicates(rng: random.Random) -> Case:
    chinese = rng.random() < 0.4
    paragraphs, swaps = (ZH_PARAGRAPHS, ZH_SWAPS) if chinese else (EN_PARAGRAPHS, EN_SWAPS)
    rotation = rng.sample(paragraphs, rng.randint(1, 3))
    sep = rng.choice(["\n\n", "\n", "" if chinese else " "])
    copies = rng.randint(6, 12)
    parts = [
        _paraphrase(rng, rotation[i % len(rotation)], swaps, rng.randint(1, 2)) for i in range(copies * len(rotation))
    ]
    intro = rng.choice(INTROS)
    return Case(intro + sep.join(parts) + sep, len(intro), rng.choice(["content", "reasoning"]))


# -- 19.1 e: reasoning that drifts through near-copies, then locks into an exact cycle ------


def drift_then_cycle(rng: random.Random) -> Case:
    chinese = rng.random() < 0.3
    paragraphs, swaps = (ZH_PARAGRAPHS, ZH_SWAPS) if chinese else (EN_PARAGRAPHS, EN_SWAPS)
    base = rng.choice(paragraphs)
    sep = rng.choice(["\n\n", "\n"])
    drift = [_paraphrase(rng, base, swaps, rng.randint(1, 3)) for _ in range(rng.randint(2, 4))]
    locked = _paraphrase(rng, base, swaps, 1)
    intro = rng.choice(INTROS[1:4])
    text = intro + sep.join(drift + [locked] * rng.randint(4, 8)) + sep
    return Case(text, len(intro), "reasoning")


# -- letter-free loops: a count of empty list items, a table's rule rows said again -------


def empty_item_count(rng: random.Random) -> Case:
    """A model counting list numbers with no items ("101. 102. 103."), a few
    to a line, on past a grid's length; some skip a number or two per line."""
    per_line = rng.randint(4, 10)
    step = per_line + rng.choice([0, 0, 1, 2])
    mark = rng.choice(["{n}.", "{n}.", "{n})"])
    first = rng.choice([1, 1, 11, 101])
    lines = [
        " ".join(mark.format(n=first + row * step + k) for k in range(per_line)) + "\n"
        for row in range(rng.randint(40, 70))
    ]
    intro = rng.choice(INTROS[:4]) + rng.choice(["Here is the puzzle:\n\n", "The numbers:\n\n", ""])
    return Case(intro + "".join(lines), len(intro))


def table_rule_rows(rng: random.Random) -> Case:
    """A Markdown table whose rule row (or a row of empty and rule cells) is
    said again and again after its data rows."""
    cols = rng.randint(2, 6)
    header = "| " + " | ".join(rng.sample(["Item", "Quantity", "Price", "Total", "Date", "Name", "Notes"], cols))
    cell = rng.choice(["---", "---", ":---:", "-----"])
    rule = "|" + "|".join(f" {cell} " for _ in range(cols)) + "|\n"
    rows = [
        "| " + " | ".join([rng.choice(WORDS).title()] + [str(rng.randint(1, 99)) for _ in range(cols - 1)]) + " |\n"
        for _ in range(rng.randint(2, 6))
    ]
    looping = rule if rng.random() < 0.5 else "|" + " " * rng.randint(1, 9) + rule[rule.index("|", 1) :]
    lead = rng.choice(INTROS[:4]) + header + " |\n" + rule + "".join(rows)
    return Case(lead + looping * rng.randint(12, 30), len(lead))


LOOP_CLASSES: dict[str, Callable[[random.Random], Case]] = {
    "a long units without whitespace": long_token_units,
    "b paragraphs past the block period limit": long_clause_paragraphs,
    "c template cycles, uneven numbers": template_cycles,
    "d near-duplicate paraphrase loops": near_duplicates,
    "e drift into an exact cycle": drift_then_cycle,
    "f a count of empty list items": empty_item_count,
    "g a table's rule row said again": table_rule_rows,
}


# -- 19.2: legitimate texts that must stay quiet -------------------------------------------


def unit_test_file(rng: random.Random) -> Case:
    cases = rng.sample(
        [(1, 2), (0, 0), (-1, 1), (10, 5), (2, 2), (7, -3), (100, 1), (3, 4), (-5, -5), (8, 13), (21, 34), (1, 0)],
        rng.randint(6, 12),
    )
    func = rng.choice(["add", "multiply", "subtract", "combine"])
    ops = {"add": "+", "multiply": "*", "subtract": "-", "combine": "+"}
    parts = [f"import unittest\n\nfrom calc import {func}\n\n\nclass Test{func.title()}(unittest.TestCase):\n"]
    for a, b in cases:
        name = f"test_{func}_{'neg' if a < 0 else 'pos'}_{abs(a)}_{abs(b)}"
        result = eval(f"{a} {ops[func]} {b}")
        parts.append(f"    def {name}(self):\n        self.assertEqual({func}({a}, {b}), {result})\n\n")
        if rng.random() < 0.5:
            parts.append(f"    def {name}_type(self):\n        self.assertIsInstance({func}({a}, {b}), int)\n\n")
    parts.append("\nif __name__ == '__main__':\n    unittest.main()\n")
    return Case("".join(parts), None)


def csv_table(rng: random.Random) -> Case:
    names = ["Alice", "Bob", "Chen", "Dana", "Eve", "Farid", "Grace", "Hiro", "Ines", "Jon", "Kofi", "Lena"]
    cities = ["Berlin", "Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Austin", "Pune"]
    lines = ["id,name,age,city,score\n"]
    for i in range(1, rng.randint(20, 60)):
        lines.append(
            f"{i},{rng.choice(names)},{rng.randint(18, 80)},{rng.choice(cities)},{rng.randint(0, 1000) / 10}\n"
        )
    return Case("Here is the data as CSV:\n\n" + "".join(lines), None)


def rows_under_a_running_id(rng: random.Random) -> Case:
    """A table whose rows say the same but for a running number that starts
    anywhere, 6 to 24 rows: hotel rooms, unpaid invoices, seats, a rota's
    dates, staff ids, pages fetched."""
    shape = rng.choice(
        [
            "| {n} | Single | Available |",
            "| INV-2024-{n:03d} | Unpaid |",
            "Row 12, Seat {n}: available",
            "| 2024-03-{n:02d} | Morning |",
            "E{n}, Pending review",
            "GET /api/items?page={n} -> 200 OK",
        ]
    )
    first = rng.randint(2, 7) if "2024-03" in shape else rng.randint(2, 1000)
    rows = "".join(shape.format(n=n) + "\n" for n in range(first, first + rng.randint(6, 24)))
    return Case("Here is the current list:\n\n" + rows + "\nLet me know if anything changes.\n", None)


def numbered_services(rng: random.Random) -> Case:
    count = rng.randint(4, 8)
    image = rng.choice(["myapp/worker:1.4", "python:3.11-slim", "celery-worker:latest"])
    parts = ["version: '3.8'\nservices:\n"]
    for i in range(1, count + 1):
        parts.append(
            f"  worker{i}:\n    image: {image}\n    command: celery -A app worker -n worker{i}@%h -Q queue{i}\n"
            f"    environment:\n      - WORKER_ID={i}\n    depends_on:\n      - redis\n"
        )
    return Case("".join(parts), None)


def markdown_table(rng: random.Random) -> Case:
    cols = rng.randint(3, 6)
    header = "| " + " | ".join(f"Col {c + 1}" for c in range(cols)) + " |\n"
    rule = "|" + "|".join("-" * rng.randint(3, 10) for _ in range(cols)) + "|\n"
    rows = []
    for _ in range(rng.randint(10, 30)):
        cells = [
            rng.choice(["", " ", str(rng.randint(0, 99)), "n/a", "yes", "no"]).ljust(rng.randint(1, 8))
            for _ in range(cols)
        ]
        rows.append("| " + " | ".join(cells) + " |\n")
    return Case(header + rule + "".join(rows), None)


def latex_layout(rng: random.Random) -> Case:
    lines = ["\\begin{aligned}\n"]
    for i in range(rng.randint(8, 20)):
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        lines.append(f"x_{{{i}}} &= {a}y_{{{i}}} + {b} \\quad \\quad \\text{{for }} i = {i} \\\\\n")
    lines.append("\\end{aligned}\n\n")
    lines.append("Spacing:" + "&nbsp;" * rng.randint(4, 12) + "done.\n")
    return Case("".join(lines), None)


REFRAINS = [
    "And the river keeps on rolling, rolling home to me,\nWhere the willows bend and whisper by the sea.\n",
    "Oh, hold the light, hold the light,\nWe'll be home before the night.\n",
    "一闪一闪亮晶晶，满天都是小星星。\n",
]
VERSES = [
    "I walked along the valley road at dawn,\nThe fields were gold, the summer almost gone.\n",
    "My father built a boat of oak and pine,\nHe said the tide would never cross the line.\n",
    "The city lights were burning through the rain,\nI counted every carriage of the train.\n",
    "She left a letter underneath the door,\nI never read the words she wrote before.\n",
    "挂在天上放光明，好像许多小眼睛。\n",
]


def song_with_refrain(rng: random.Random) -> Case:
    refrain = rng.choice(REFRAINS)
    verses = rng.sample(VERSES, rng.randint(3, 5))
    parts = ["Here are the lyrics:\n\n"]
    for verse in verses:
        parts.append(verse + "\n" + refrain + "\n")
    return Case("".join(parts), None)


def slip_said_twice(rng: random.Random) -> Case:
    # Each item with the next one a list would hold, opening with the same words.
    item, following = rng.choice(
        [
            (
                "- Smith, J. (2019). Deep learning for time series forecasting. "
                "Journal of Data Science, 12(3), 45-67.\n",
                "- Smith, J. (2019). Attention for anomaly detection. Machine Learning Letters, 8(1), 1-19.\n",
            ),
            (
                "3. Make sure the database migrations have been applied before you start the worker processes.\n",
                "3. Make sure the cache is warm before traffic reaches the new servers.\n",
            ),
            (
                "- Use a virtual environment so the project's dependencies do not clash with the system packages.\n",
                "- Use a lock file so the project's dependencies resolve the same way on every machine.\n",
            ),
        ]
    )
    before = rng.sample(VERSES, 2)
    after = following if rng.random() < 0.5 else ""
    return Case("Notes:\n\n" + "".join(before) + item + item + after + "That covers the main points.\n", None)


def random_strings(rng: random.Random) -> Case:
    if rng.random() < 0.5:
        body = "".join(rng.choice("ACGT") for _ in range(rng.randint(400, 2000)))
        return Case(">sequence_1\n" + "\n".join(body[i : i + 60] for i in range(0, len(body), 60)) + "\n", None)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = "".join(rng.choice(alphabet) for _ in range(rng.randint(400, 3000)))
    return Case("data:image/png;base64," + body + "==\n", None)


def training_log(rng: random.Random) -> Case:
    epochs = rng.randint(10, 40)
    loss, acc = rng.uniform(1.5, 2.5), rng.uniform(0.2, 0.4)
    lines = []
    for e in range(1, epochs + 1):
        loss *= rng.uniform(0.8, 0.98)
        acc = min(0.99, acc + rng.uniform(0.0, 0.05))
        lines.append(
            f"Epoch {e}/{epochs} - {rng.randint(20, 90)}s - loss: {loss:.4f} - accuracy: {acc:.4f}"
            f" - val_loss: {loss * rng.uniform(1.0, 1.2):.4f} - val_accuracy: {acc * rng.uniform(0.9, 1.0):.4f}\n"
        )
    return Case("Training output:\n\n" + "".join(lines), None)


def epoch_records(rng: random.Random) -> Case:
    """A training or batch log of several lines an epoch, each under a count
    towards its stated total: Keras's two lines an epoch, an epoch's metrics
    one to a line, a batch job's progress report; 10 to 60 epochs."""
    total = rng.randint(10, 60)
    shape = rng.choice(["keras", "metrics", "batches"])
    steps, loss, acc = rng.choice([469, 938, 1875]), rng.uniform(1.5, 2.5), rng.uniform(0.2, 0.4)
    records = []
    for n in range(1, total + 1):
        loss *= rng.uniform(0.8, 0.98)
        acc = min(0.99, acc + rng.uniform(0.0, 0.05))
        if shape == "keras":
            records.append(
                f"Epoch {n}/{total}\n{steps}/{steps} [==============================] - {rng.randint(3, 40)}s"
                f" {rng.randint(2, 9)}ms/step - loss: {loss:.4f} - accuracy: {acc:.4f}"
                f" - val_loss: {loss * rng.uniform(1.0, 1.2):.4f} - val_accuracy: {acc * rng.uniform(0.9, 1.0):.4f}\n"
            )
        elif shape == "metrics":
            records.append(
                f"Epoch {n}/{total}\n  train loss: {loss:.4f}\n  val loss: {loss * rng.uniform(1.0, 1.2):.4f}\n"
                f"  val accuracy: {acc:.2%}\n"
            )
        else:
            records.append(
                f"Batch {n} of {total}\n  rows read: {rng.randint(900, 1100)}\n"
                f"  rows written: {rng.randint(800, 900)}\n  errors: {rng.randint(0, 3)}\n"
            )
    return Case("Here is the output:\n\n" + "".join(records) + "\nTraining finished.\n", None)


def zero_grid(rng: random.Random) -> Case:
    size = rng.randint(5, 20)
    sep = rng.choice([" ", ", ", "\t"])
    row = "[" + sep.join(["0"] * size) + "]"
    return Case("The initial board is all zeros:\n\n" + ",\n".join([row] * size) + "\n", None)


def letter_free_count(rng: random.Random) -> Case:
    """Counts and numeric tables without a word: 1 to 100 ten to a line, a
    countdown, page numbers, primes, a log of readings, a table's numbers."""
    kind = rng.choice(["grid", "countdown", "pages", "primes", "readings", "list"])
    if kind == "grid":
        per_line = rng.choice([5, 10])
        body = "\n".join(
            " ".join(str(row * per_line + k) for k in range(1, per_line + 1)) for row in range(100 // per_line)
        )
    elif kind == "countdown":
        body = rng.choice(["... ", ", ", "!\n"]).join(str(n) for n in range(rng.randint(10, 60), 0, -1))
    elif kind == "pages":
        body = "\n\n".join(f"- {n} -" for n in range(1, rng.randint(10, 30)))
    elif kind == "primes":
        primes = [n for n in range(2, rng.randint(300, 1000)) if all(n % d for d in range(2, int(n**0.5) + 1))]
        body = ", ".join(map(str, primes))
    elif kind == "readings":
        value = rng.uniform(10, 30)
        rows = []
        for minute in range(rng.randint(10, 30)):
            value += rng.uniform(-0.5, 0.5)
            rows.append(f"12:{minute:02d}:00  {value:.2f}  {rng.randint(990, 1030)}")
        body = "\n".join(rows)
    else:
        body = "\n".join(f"{n}. {rng.randint(1, 500)}" for n in range(1, rng.randint(10, 150)))
    return Case("Here you go:\n\n" + body + "\n", None)


def long_numbered_list(rng: random.Random) -> Case:
    """A numbered list of 150 items, each a different name."""
    first = ["North", "South", "Red", "Blue", "Old", "New", "Green", "Silver", "Stone", "Lake"]
    second = ["field", "wood", "bridge", "haven", "ford", "gate", "hill", "port", "vale", "brook"]
    names = rng.sample([a + b for a in first for b in second], 100) + [
        f"{a} {b.title()}" for a in first[:5] for b in second
    ]
    return Case("Here are 150 place names:\n\n" + "".join(f"{n}. {name}\n" for n, name in enumerate(names, 1)), None)


def counted_printout(rng: random.Random) -> Case:
    """A counted loop's printout in a code block (`for i in range(10)`, 20, 25):
    one line per pass, the same words and a number that counts, in a block of
    its own under "Output:" or as comments after the code in the same block."""
    line = rng.choice(
        [
            "Processing item {i}",
            "The value of i is {i}",
            "Thread {i} finished its work",
            "Sending request number {i}...",
            "Worker {i} started",
            "Iteration {i}: loss not computed yet",
            "Hello from task {i}",
        ]
    )
    first = rng.choice([0, 1])
    count = rng.choice([10, 12, 15, 20, 24])
    code = f'```python\nfor i in range({first}, {first + count}):\n    print(f"{line}")\n'
    printed = [line.format(i=i) + "\n" for i in range(first, first + count)]
    if rng.random() < 0.5:
        text = code + "```\n\nOutput:\n\n```\n" + "".join(printed) + "```\n"
    else:
        text = code + "\n# Output:\n" + "".join("# " + p for p in printed) + "```\n"
    return Case("Here is the loop:\n\n" + text + "\nEach pass prints one line.\n", None)


PRINTING_LOOPS = [
    'for i in range({n}):\n    print("{line}")',
    "count = 0\nwhile count < {n}:\n    print('{line}')\n    count += 1",
    'for (let i = 0; i < {n}; i++) {{\n  console.log("{line}");\n}}',
    'for (int i = 0; i < {n}; i++) {{\n    printf("{line}\\n");\n}}',
    'for (int i = 0; i < {n}; i++) {{\n    System.out.println("{line}");\n}}',
    'for i in $(seq 1 {n}); do\n  echo "{line}"\ndone',
    '{n}.times {{ puts "{line}" }}',
]
PRINTED_LINES = [
    "Hello, World!",
    "Hello",
    "Hi there!",
    "I love programming.",
    "Python is fun",
    "Welcome to the loop tutorial",
    "Good morning, everyone!",
    "你好，世界！",
]


def constant_printout(rng: random.Random) -> Case:
    """A loop that prints the same line, and its printout, 3 to 30 lines:
    in prose after "This will print:" or in a code block of its own
    (Python, JavaScript, C, Java, Bash, Ruby)."""
    line, n = rng.choice(PRINTED_LINES), rng.randint(3, 30)
    code = rng.choice(PRINTING_LOOPS).format(n=n, line=line)
    printed = f"{line}\n" * n
    if rng.random() < 0.5:
        printed = "```\n" + printed + "```\n"
    lead = rng.choice(["This will print:\n\n", "Output:\n\n", "When you run it, you get:\n\n", "输出：\n"])
    end = rng.choice(["\nThe body runs once per pass.\n", "\nChange the number to print it more often.\n", ""])
    return Case(f"Here is a loop that prints a line {n} times:\n\n```\n{code}\n```\n\n" + lead + printed + end, None)


def same_cells_table(rng: random.Random) -> Case:
    """A table whose cells say the same across a row, up to 24 rows: a
    week's timetable by the hour ("| 9:00 | Work | Work | Work | Work | Work
    |"), an attendance sheet, rooms' availability, plans' features; 4 to 8
    columns of the same word, in English or Chinese; or as CSV or TSV, 4
    to 14 fields ("Room 101,TRUE,TRUE,TRUE,TRUE")."""
    columns = rng.randint(4, 8)
    word = rng.choice(["Work", "Study", "Free", "Class", "Available", "Present", "Yes", "Included", "上课", "空闲"])
    shape = rng.choice(["hours", "students", "rooms", "features"])
    if shape == "hours":
        first = rng.randint(6, 9)
        keys = [f"{h}:00" for h in range(first, first + rng.randint(8, 15))]
    elif shape == "students":
        keys = [f"Student {n}" for n in range(1, rng.randint(6, 24) + 1)]
    elif shape == "rooms":
        floor = rng.randint(1, 5)
        keys = [f"Room {floor}{n:02d}" for n in range(1, rng.randint(6, 20) + 1)]
    else:
        keys = rng.sample(["Storage", "Backups", "SSO", "API access", "Support", "Audit log", "Custom domain"], 5)
    if rng.random() < 0.3:
        # As CSV or TSV, unfenced: a field said again with no space after its comma, or after a tab.
        word = rng.choice(["TRUE", "FALSE", "N/A", "null", "NaN", "yes", "Open"])
        columns += rng.randint(0, 6)
        sep = rng.choice([",", "\t"])
        header = "key" + sep + sep.join(f"c{c}" for c in range(1, columns + 1)) + "\n"
        table = header + "".join(key + sep + sep.join([word] * columns) + "\n" for key in keys)
        return Case(rng.choice(["Here is the CSV:\n\n", "data.csv:\n\n", ""]) + table, None)
    rows = [f"| {key} | " + " | ".join([word] * columns) + " |\n" for key in keys]
    header = "| | " + " | ".join(f"Col {c}" for c in range(1, columns + 1)) + " |\n|" + "---|" * (columns + 1) + "\n"
    table = header + "".join(rows)
    return Case(rng.choice(["Here is the table:\n\n", "Sure! Here is the schedule.\n\n", ""]) + table, None)


TEMPLATE_ENTRIES = [
    (
        "**[Job Title]** | [Company Name] | [Start Date] – [End Date]\n"
        "- [Key responsibility or achievement]\n- [Key responsibility or achievement]\n"
        "- [Key responsibility or achievement]\n\n",
        (2, 5),
    ),
    ("| [Item description] | [Qty] | [Unit price] | [Total] |\n", (3, 12)),
    ("- [Point]\n", (3, 8)),
    ("* [Add a supporting detail here]\n", (3, 8)),
    ("### [Project Name]\n[One-line description of the project and your role.]\n\n", (2, 5)),
    ("[Reference Name], [Title], [Company] – [Phone] | [Email]\n", (3, 5)),
    ("- [填写内容]\n", (3, 8)),
    ("- 【填写内容】\n", (3, 8)),
    ("公司：XXX\n职位：XXX\n时间：XXXX年XX月 - XXXX年XX月\n\n", (2, 5)),
    ("Name: XXX, Phone: XXX-XXX-XXXX\n", (3, 8)),
    ("- 某某：负责某某工作\n", (3, 8)),
    ("| [Time] | [Topic] | [Speaker] |\n", (4, 10)),
]


def placeholder_template(rng: random.Random) -> Case:
    """A fill-in template whose entries are placeholders ("[Your Name]",
    "【填写内容】", "XXX", "某某"), said as many times as the template has
    slots: a resume's jobs, an invoice's rows, an outline's points, a
    portfolio's projects, references, contacts, an agenda."""
    entry, (low, high) = rng.choice(TEMPLATE_ENTRIES)
    head = rng.choice(["Here is a template you can fill in:\n\n", "## Experience\n\n", "模板如下：\n\n", ""])
    if entry.startswith("|"):
        head += "| " + " | ".join(["Column"] * entry.count(" | ")) + " |\n|" + "---|" * entry.count(" | ") + "\n"
    end = rng.choice(["\nReplace each bracket with your own details.\n", "\n**[Your Name]**\n", ""])
    return Case(head + entry * rng.randint(low, high) + end, None)


def raw_code_output(rng: random.Random) -> Case:
    """Code or markup asked for with no fence ("only the code"): a page's
    HTML whose list or table repeats a placeholder line 4 to 9 times, or a
    Python script that makes the same call 4 to 9 times in a row."""
    n = rng.randint(4, 9)
    if rng.random() < 0.5:
        line = rng.choice(['      <li><a href="#">Link</a></li>\n', "      <tr><td></td><td></td><td></td></tr>\n"])
        tag = "ul" if "<li>" in line else "table"
        body = f"<!DOCTYPE html>\n<html>\n  <body>\n    <{tag}>\n" + line * n + f"    </{tag}>\n  </body>\n</html>\n"
    else:
        line = rng.choice(["    pump.step()\n", "    print()\n", "    queue.get_nowait()\n"])
        head = rng.choice(["#!/usr/bin/env python3\n", "import sys\n", '"""Drive the pump by hand."""\n'])
        body = head + "\n\ndef main():\n" + line * n + '\n\nif __name__ == "__main__":\n    main()\n'
    return Case(body, None)


def json_output(rng: random.Random) -> Case:
    """A structured output (JSON mode), with no code fence: an object whose
    array holds the same value (null, false, 0.0, "") 8 to 20 times on one
    line, or up to 12 one a line; or an array of objects alike, up to 160
    characters of them on one line, or up to 9 one a line. (Data, as a
    code block holds it: a literal's items said again over
    `block_region_chars`, or `symbol_region_chars` without a letter, a
    line said again `template_min_copies` times, are a loop.)"""
    value = rng.choice(["null", "false", "0.0", '""', "true"])
    key = rng.choice(["values", "flags", "scores", "labels", "mask", "readings"])
    head = f'{{"id": {rng.randint(1, 999)}, "{key}": '
    shape = rng.choice(["inline", "lines", "objects", "object lines"])
    if shape == "inline":
        sep = rng.choice([", ", ","])
        body = head + "[" + sep.join([value] * rng.randint(8, 20)) + "]}"
    elif shape == "lines":
        body = head + "[\n" + ",\n".join(["    " + value] * rng.randint(3, 12)) + "\n  ]\n}"
    else:
        item = rng.choice(['{"status": "pending"}', '{"done": false, "notes": null}', '{"score": 0, "flag": null}'])
        if shape == "objects":
            body = "[" + ", ".join([item] * rng.randint(2, 160 // len(item + ", "))) + "]"
        else:
            body = "[\n" + ",\n".join(["  " + item] * rng.randint(2, 9)) + "\n]"
    return Case(body + rng.choice(["", "\n"]), None)


def closed_markup(rng: random.Random) -> Case:
    """Nested markup closed at once: minified HTML or SVG up to 12 levels
    deep ("</div></div>…"), the same one tag a line, LaTeX lists four deep."""
    kind = rng.choice(["minified", "lines", "svg", "latex"])
    depth = rng.randint(5, 12)
    if kind == "minified":
        text = "<div>" * depth + "<p>Welcome back!</p>" + "</div>" * depth
    elif kind == "lines":
        text = "<div>\n" * depth + "<span>Total: 42</span>\n" + "</div>\n" * depth
    elif kind == "svg":
        text = "<svg><g>" + "<g><g>" * (depth // 2) + "<circle r='4'/>" + "</g></g>" * (depth // 2) + "</g></svg>"
    else:
        envs = [rng.choice(["itemize", "enumerate"]) for _ in range(4)]
        opened = "".join(f"\\begin{{{env}}}\n\\item Level {n + 1}\n" for n, env in enumerate(envs))
        text = opened + "".join(f"\\end{{{env}}}\n" for env in reversed(envs))
    return Case("Here is the markup:\n\n```\n" + text + "\n```\n\nEvery element opened is closed.\n", None)


def documented_errors(rng: random.Random) -> Case:
    """A module in a code block of error classes, each with a docstring
    that says the same sentence about another error."""
    # Codes made of a few words each ("no such frame", "invalid frame"): after
    # a few classes, a docstring brings no word the ones before it lack.
    prefixes, nouns = ["no such", "invalid", "unable to find", "unknown"], ["element", "frame", "script", "session"]
    errors = rng.sample([f"{prefix} {noun}" for prefix in prefixes for noun in nouns], rng.randint(10, 14))
    base = rng.choice(["BiDiError", "ProtocolError", "RemoteError"])
    parts = [f'```python\nclass {base}(Exception):\n    """Base class of the protocol\'s errors."""\n\n']
    for error in errors:
        name = "".join(word.title() for word in error.split())
        parts.append(
            f"\nclass {name}({base}):\n"
            f'    """Raised when the remote end answers with the "{error}" error code."""\n\n'
            f'    code = "{error}"\n\n'
        )
    return Case("Here is the module:\n\n" + "".join(parts) + "```\n\nEvery class maps one error code.\n", None)


def count_down(rng: random.Random) -> Case:
    """A count that ends at zero: releases listed newest first, a countdown."""
    kind = rng.choice(["releases", "changelog", "countdown"])
    top = rng.randint(10, 24)
    if kind == "releases":
        major, minor = rng.randint(1, 4), rng.randint(0, 13)
        change = rng.choice(["bug fixes and security updates", "fixes for regressions in the last release"])
        lines = [f"- v{major}.{minor}.{n}: {change}\n" for n in range(top, 0, -1)]
    elif kind == "changelog":
        lines = [f"* [Version {n}](docs/changelogs/CHANGELOG_V{n}.md) End-of-Life\n" for n in range(top, 0, -1)]
    else:
        lines = [f"T-minus {n} seconds and counting\n" for n in range(top, 0, -1)] + ["Liftoff!\n"]
    return Case("Here is the list:\n\n" + "".join(lines) + "\nThat is the whole list.\n", None)


def repeated_calls(rng: random.Random) -> Case:
    """Code in a code block that makes the same call a few times in a row
    (a pump stepped by hand, a queue drained, a generator advanced)."""
    call = rng.choice(
        ["pump.step()", "next(it)", "q.get_nowait()", "self._pump.pump()", "gen.send(None)", "clock.advance(1)"]
    )
    indent = rng.choice(["", "    ", "        "])
    times = rng.randint(3, 5)
    code = f"```python\n{indent}setup()\n" + f"{indent}{call}\n" * times + f"{indent}assert done()\n```\n"
    return Case("Drive it by hand:\n\n" + code + "\nEach call moves one step.\n", None)


def code_enumerations(rng: random.Random) -> Case:
    """Code in a code block that enumerates line by line, from anywhere and
    up to 99 lines: a form's years, seed rows inserted, port mappings, enum
    members, a loop's printout; or writes a literal's items, a signature's
    parameters or a grid's columns out."""
    kind = rng.choice(["years", "inserts", "ports", "enum", "printout", "literal", "signature", "columns"])
    first, count = rng.randint(0, 2000), rng.randint(6, 99)
    numbers = range(first, first + count)
    if kind == "years":
        lang, body = "html", "".join(f'  <option value="{n}">{n}</option>\n' for n in numbers)
    elif kind == "inserts":
        table = rng.choice(["seats", "rooms", "slots"])
        lang = "sql"
        body = "".join(f"INSERT INTO {table} (id, status) VALUES ({n}, 'free');\n" for n in numbers)
    elif kind == "ports":
        lang, body = "yaml", "ports:\n" + "".join(f'  - "{n}:{n}"\n' for n in numbers)
    elif kind == "enum":
        lang, body = "python", "class Level(IntEnum):\n" + "".join(f"    LEVEL_{n} = {n}\n" for n in numbers)
    elif kind == "printout":
        lang, body = "", "".join(f"i = {n}\n" for n in numbers)
    elif kind == "columns":
        lang = "css"
        body = f".grid {{\n  grid-template-columns:{' 1fr' * rng.randint(4, 24)};\n}}\n"
    elif kind == "signature":
        tensors = rng.randint(2, 6)
        lang = "cpp"
        body = (
            f"std::tuple<{','.join(['at::Tensor'] * tensors)}> cell_backward("
            f"{', '.join(['const at::Tensor &'] * tensors)}, int64_t steps);\n"
        )
    else:
        item = rng.choice(["None", "False", "True", "null", '""'])
        lang, body = "python", f"row = ({', '.join([item] * rng.randint(4, 20))})\n"
    return Case(f"Here it is:\n\n```{lang}\n{body}```\n\nAdjust the values as needed.\n", None)


def code_placeholders(rng: random.Random) -> Case:
    """Code in a code block that writes the same line out, up to 9 times: a
    board's empty rows, a menu's placeholder links, a table's empty rows, a
    gallery's images, a tic-tac-toe grid's cells; or the same lines three
    times: a recursion's frames as Python's traceback prints them."""
    kind = rng.choice(["board", "menu", "rows", "gallery", "cells", "traceback"])
    times = rng.randint(3, 9)
    if kind == "traceback":
        name = rng.choice(["factorial", "fib", "walk", "visit"])
        frame = f'  File "main.py", line {rng.randint(2, 40)}, in {name}\n    return {name}(n - 1)\n'
        text = (
            'Traceback (most recent call last):\n  File "main.py", line 50, in <module>\n'
            f"    print({name}(5))\n{frame * 3}  [Previous line repeated 996 more times]\n"
            "RecursionError: maximum recursion depth exceeded\n"
        )
        return Case(f"You get this error:\n\n```\n{text}```\n\nAdd a base case.\n", None)
    if kind == "board":
        empty = rng.choice(["null", "None", "'.'", '" "'])
        lang, line = "js", "  [" + ", ".join([empty] * rng.randint(3, 9)) + "],\n"
    elif kind == "menu":
        lang, line = "html", '    <li><a href="#">' + rng.choice(["Link", "Menu item", "Page"]) + "</a></li>\n"
    elif kind == "rows":
        lang, line = "html", "  <tr>" + "<td></td>" * rng.randint(2, 6) + "</tr>\n"
    elif kind == "gallery":
        size = rng.choice([150, 200, 300])
        lang, line = "html", f'  <img src="https://via.placeholder.com/{size}" alt="Placeholder image">\n'
    else:
        lang, line = "html", '  <div class="cell" onclick="play(this)"></div>\n'
    return Case(f"Start from this:\n\n```{lang}\n{line * times}```\n\nThen fill it in.\n", None)


def enumerated_from_one(rng: random.Random) -> Case:
    """The same words numbered from 1 or 0, up to 24 rows: a template's rows,
    a plan's rest days, an answer sheet, seats, a log of requests."""
    shape = rng.choice(
        [
            "| {n} | TBD | TBD | TBD |",
            "Name {n}: ____________",
            "Seat {n}: available",
            "Chapter {n}: Untitled",
            "Day {n}: Rest and recover.",
            "Question {n}: ______",
            "- test_case_{n}: passed",
            "[INFO] Request {n} completed successfully",
            '  {{"id": {n}, "status": "active"}},',
        ]
    )
    first = rng.choice([0, 1])
    rows = "".join(shape.format(n=n) + "\n" for n in range(first, first + rng.randint(7, 24)))
    return Case("Here is the list:\n\n" + rows + "\nFill it in as you go.\n", None)


def blank_layouts(rng: random.Random) -> Case:
    """Rows without data, as people draw them: an ASCII box, an empty board,
    a blank table to fill in (up to 15 rows), a divider under a title."""
    kind = rng.choice(["box", "board", "template", "divider"])
    if kind == "box":
        width = rng.randint(10, 40)
        edge = "+" + "-" * width + "+\n"
        text = edge + ("|" + " " * width + "|\n") * rng.randint(3, 20) + edge
    elif kind == "board":
        size = rng.randint(3, 8)
        text = "+---" * size + "+\n" + ("|   " * size + "|\n" + "+---" * size + "+\n") * 2
    elif kind == "template":
        cols = rng.randint(2, 6)
        header = "| " + " | ".join(rng.sample(["Date", "Task", "Hours", "Notes", "Owner", "Status"], cols)) + " |\n"
        text = header + "|" + "---|" * cols + "\n" + ("|" + "   |" * cols + "\n") * rng.randint(5, 15)
    else:
        text = "Results\n" + rng.choice("=-~") * rng.randint(20, 60) + "\n\nAll tests passed.\n"
    return Case("Here it is:\n\n" + text, None)


def empty_boards(rng: random.Random) -> Case:
    """An empty board as people ask for one, a rule between its rows: a
    chessboard's starting position (four empty ranks), an empty 3 x 3 to
    15 x 15 grid drawn with `+---+`, `|___|` or box-drawing characters,
    Connect Four, an empty Sudoku; in a code block or not."""
    kind = rng.choice(["chess", "plus", "underscore", "box", "sudoku"])
    size = rng.randint(3, 15)
    if kind == "chess":
        rule = "+---" * 8 + "+\n"
        ranks = ["rnbqkbnr", "pppppppp"] + [" " * 8] * 4 + ["PPPPPPPP", "RNBQKBNR"]
        board = rule + "".join("| " + " | ".join(rank) + " |\n" + rule for rank in ranks)
    elif kind == "plus":
        cols = rng.choice([size, 7])  # Connect Four: 7 columns, 6 rows
        rule = "+---" * cols + "+\n"
        board = rule + ("|   " * cols + "|\n" + rule) * (6 if cols == 7 else size)
    elif kind == "underscore":
        board = " ___" * size + "\n" + ("|   " * size + "|\n" + "|___" * size + "|\n") * size
    elif kind == "box":
        inner = "\u2502" + "   \u2502" * size + "\n"
        rule = "\u251c" + "\u2500\u2500\u2500\u253c" * (size - 1) + "\u2500\u2500\u2500\u2524\n"
        top = "\u250c" + "\u2500\u2500\u2500\u252c" * (size - 1) + "\u2500\u2500\u2500\u2510\n"
        bottom = "\u2514" + "\u2500\u2500\u2500\u2534" * (size - 1) + "\u2500\u2500\u2500\u2518\n"
        board = top + (inner + rule) * (size - 1) + inner + bottom
    else:
        rule = "+-------+-------+-------+\n"
        board = rule + ("| . . . | . . . | . . . |\n" * 3 + rule) * 3
    intro = rng.choice(["Here is the board:\n\n", "Sure! Here's an empty grid you can print:\n\n", ""])
    if rng.random() < 0.5:
        board = "```\n" + board + "```\n"
    return Case(intro + board + rng.choice(["", "\nGood luck!\n"]), None)


def blank_forms(rng: random.Random) -> Case:
    """A form to print and fill in: a sign-in sheet's lines (numbered or
    not, in English or Chinese), lined paper, a notes list, answer lines, a
    signature block for each signer; 5 to 25 rows."""
    rows = rng.randint(5, 25)
    blank = "_" * rng.randint(8, 30)
    kind = rng.choice(["sheet", "numbered", "paper", "notes", "answers", "signatures"])
    names = (
        ["Name", "Signature", "Date", "Phone", "Email", "Room"]
        if rng.random() < 0.7
        else ["姓名", "电话", "签名", "日期"]
    )
    fields = rng.sample(names, rng.randint(1, 3))
    line = "  ".join(f"{field}: {blank}" for field in fields) + "\n"
    if kind == "sheet":
        form = line * rows
    elif kind == "numbered":
        form = "".join(f"{i}. {line}" for i in range(1, rows + 1))
    elif kind == "paper":
        form = ("_" * rng.randint(40, 80) + rng.choice(["\n", "\n\n"])) * rows
    elif kind == "notes":
        form = "Notes:\n" + ("- " + blank + "\n") * rows
    elif kind == "answers":
        form = "Answer:\n" + ("." * rng.randint(40, 70) + "\n") * rows
    else:
        form = ("Signed: " + blank + "\nDate: " + blank + "\n\n") * rng.randint(2, 4)
    if rng.random() < 0.25:
        form = "```\n" + form + "```\n"
    return Case(rng.choice(["Here is a printable form:\n\n", "Sure! Print this out:\n\n", ""]) + form, None)


SONG_VERSES = [
    "{n} green bottles hanging on the wall,\n{n} green bottles hanging on the wall,\n"
    "And if one green bottle should accidentally fall,\nThere'll be {m} green bottles hanging on the wall.\n\n",
    'There were {n} in the bed and the little one said,\n"Roll over! Roll over!"\n'
    "So they all rolled over and one fell out,\nAnd then there were {m}.\n\n",
    "{n} little monkeys jumping on the bed,\nOne fell off and bumped his head.\n"
    'Mama called the doctor and the doctor said,\n"No more monkeys jumping on the bed!" ({m} left)\n\n',
    "{n} little speckled frogs sat on a speckled log, eating some most delicious bugs. Yum yum!\n"
    "One jumped into the pool, where it was nice and cool. Then there were {m} green speckled frogs.\n\n",
    "{n} bottles of pop on the wall, {n} bottles of pop.\n"
    "Take one down, pass it around, {m} bottles of pop on the wall.\n\n",
]


def songs_counting_down(rng: random.Random) -> Case:
    """A counting song written out, one verse per number, counting down to
    none: "Ten green bottles", "Ten in the bed", monkeys, frogs; from 3 to 20."""
    verse = rng.choice(SONG_VERSES)
    first = rng.randint(3, 20)
    song = "".join(verse.format(n=n, m=n - 1) for n in range(first, 0, -1))
    return Case(rng.choice(["Here are the lyrics:\n\n", "Sure! Let's sing it all the way down:\n\n", ""]) + song, None)


def month_of_days(rng: random.Random) -> Case:
    """A month's days from the first, the same each day: a 30-day challenge
    ("Day 7: 30 push-ups"), a habit tracker ("- [ ] Day 7: Read 20 pages"),
    a check-in sheet ("第7天：□"), a month's rota ("June 7: Rest"); 26 to
    31 days."""
    days = rng.randint(26, 31)
    task = rng.choice(["30 push-ups", "Read 20 pages", "Run 3 km and stretch for 10 minutes", "Rest", "No sugar"])
    line = rng.choice(
        ["Day {d}: {t}\n", "- [ ] Day {d}: {t}\n", "第{d}天：□\n", "June {d}: {t}\n", "| {d} | {t} | |\n"]
    )
    head = "| Day | Task | Done |\n|---|---|---|\n" if line.startswith("|") else ""
    plan = head + "".join(line.format(d=d, t=task) for d in range(1, days + 1))
    return Case(rng.choice(["Here is your 30-day plan:\n\n", "打卡表：\n\n", ""]) + plan, None)


QUIET_CLASSES: dict[str, Callable[[random.Random], Case]] = {
    "test file with similar methods": unit_test_file,
    "CSV table with running ids": csv_table,
    "a table's rows under a running id, from anywhere": rows_under_a_running_id,
    "config with numbered services": numbered_services,
    "Markdown table, padded or blank cells": markdown_table,
    "a table or CSV whose cells say the same across a row": same_cells_table,
    "LaTeX layout tokens": latex_layout,
    "song or poem with a refrain": song_with_refrain,
    "item said twice (a slip)": slip_said_twice,
    "DNA or base64 string": random_strings,
    "JSON output with no code fence": json_output,
    "code or markup with no code fence": raw_code_output,
    "training log, a line per epoch": training_log,
    "training log, a record per epoch under its count": epoch_records,
    "all-zero grid": zero_grid,
    "letter-free counts and numeric tables": letter_free_count,
    "numbered list of 150 items": long_numbered_list,
    "blank boxes, boards and table templates": blank_layouts,
    "an empty board, a rule between its rows": empty_boards,
    "a blank form to fill in": blank_forms,
    "a template of placeholders to fill in": placeholder_template,
    "a song counting its verses down": songs_counting_down,
    "a month's days from the first, the same each day": month_of_days,
    "printout of a counted loop": counted_printout,
    "printout of a loop printing the same line": constant_printout,
    "nested markup closed at once": closed_markup,
    "error classes documented alike, in a code block": documented_errors,
    "a count down to zero": count_down,
    "a call made a few times in a code block": repeated_calls,
    "the same words numbered from 1": enumerated_from_one,
    "code that enumerates, in a code block": code_enumerations,
    "lines written out a few times, in a code block": code_placeholders,
}


def cases(generator: Callable[[random.Random], Case], count: int, salt: str) -> list[Case]:
    """`count` cases of one class, seeded by the class name and the case number."""
    return [generator(random.Random(f"{salt}:{n}")) for n in range(count)]
