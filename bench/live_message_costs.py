"""The event loop's own work on a producer's message, step by step, timed in
process (`time.process_time`, best of `--repeat` rounds, each
`--messages` messages): how each step of issue 20's third round
(BENCHMARKS.md, section 4) compares with what it replaced. The steps are
the same calls the server makes; the "before" column is the code they
replaced, written out here.

    .venv/bin/python bench/live_message_costs.py [--events 1 8] [--messages 20000] [--repeat 5] [--busy]

`--busy`: another thread runs Python all along, as the ingest thread does
under load, and each step is timed by the clock (`time.perf_counter`), not
by CPU time: a step that releases the GIL (a native call through cffi)
waits for it to come back, or not, as the threads happen to be scheduled,
so the mean of the rounds is shown, not the best.

Per message of N `content` events of 16 characters (with a `sent` time, as
`live_load.py` sends them):

- unmask: the client frame's payload (autobahn's native masker built per
  frame, before; `frame_masks.xor_masker`, after);
- UTF-8: the text frame's check (autobahn's native validator, reset and
  validate, before; `frame_utf8.Utf8Check`, after);
- depth: the depth check of the text (`json_depth_problem`);
- decode: the JSON parse (`json.loads(text, parse_constant=...)`, before;
  one decoder kept, after);
- check and encode: the storable check (`json.dumps` of the events, then
  each event encoded again by the ingest thread to be stored, before;
  `parse_message`'s texts, stored as they are, after).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopguard_site.settings")


def round_us(step, items: list, repeat: int, clock=time.process_time) -> list[float]:
    """µs an item in each of `repeat` rounds of `step` on every item (CPU µs
    with the default `clock`)."""
    rounds = []
    for _ in range(repeat):
        start = clock()
        for item in items:
            step(item)
        rounds.append(1e6 * (clock() - start) / len(items))
    return rounds


class BusyThread:
    """A thread running Python until the block ends: the GIL is taken from
    any step that gives it away."""

    def __enter__(self) -> BusyThread:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        return self

    def _spin(self) -> None:
        count = 0
        while not self._stop.is_set():
            count += 1

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[1, 8], help="events a message (default 1 8)")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--busy", action="store_true", help="time each step by the clock beside a thread running Python"
    )
    args = parser.parse_args(argv)

    import django

    django.setup()
    from autobahn.websocket.utf8validator import Utf8Validator
    from autobahn.websocket.xormasker import create_xor_masker
    from django.conf import settings

    from bench.detector_speed import corpus_texts
    from bench.lab_processes import load_average
    from detector.json_depth import json_depth_problem, json_max_depth
    from loopguard_site.frame_masks import xor_masker
    from loopguard_site.frame_utf8 import Utf8Check
    from loopguard_site.live.consumers import _DECODER, _reject_constant
    from loopguard_site.live.protocol import _storable_texts
    from loopguard_site.storable import unstorable_event
    from loopguard_site.transcripts.event_rows import event_json

    limit = settings.LOOPGUARD_MAX_JSON_DEPTH
    _, text = corpus_texts(200_000)["content"]
    what, clock, pick = ("µs a message by the clock, another thread running; mean", time.perf_counter,
        statistics.mean) if args.busy else ("CPU µs a message; best", time.process_time, min)  # fmt: skip
    print(f"{what} of {args.repeat} rounds of {args.messages:,}; {load_average()}")
    print("| events a message | step | before | after |")
    print("|---|---|---|---|")
    native, check = Utf8Validator(), Utf8Check()  # one a socket, reset for each message
    for count in args.events:
        texts = [
            json.dumps(
                {
                    "seq": n + 1,
                    "events": [
                        {"type": "content", "text": text[(n * count + i) * 16 :][:16], "sent": 1234.5 + n}
                        for i in range(count)
                    ],
                }
            )
            for n in range(args.messages)
        ]
        frames = [(os.urandom(4), text.encode()) for text in texts]
        event_lists = [json.loads(text)["events"] for text in texts]

        def checked_before(events: list[dict]) -> None:
            unstorable_event(events, json.dumps(events, ensure_ascii=False, allow_nan=False))
            for event in events:  # and the ingest thread encoded each again, to store it
                event_json(event)

        steps = [
            ("unmask", lambda f: create_xor_masker(f[0], len(f[1])).process(f[1]),
             lambda f: xor_masker(f[0], len(f[1])).process(f[1]), frames),
            ("UTF-8", lambda f: (native.reset(), native.validate(f[1])),
             lambda f: (check.reset(), check.validate(f[1])), frames),
            ("depth", lambda t: json_max_depth(t) <= limit, lambda t: json_depth_problem(t, limit), texts),
            ("decode", lambda t: json.loads(t, parse_constant=_reject_constant), _DECODER.decode, texts),
            ("check and encode", checked_before, lambda events: _storable_texts("events", events), event_lists),
        ]  # fmt: skip
        totals = [0.0, 0.0]
        for name, before, after, items in steps:
            with BusyThread() if args.busy else contextlib.nullcontext():
                cost = [pick(round_us(step, items, args.repeat, clock)) for step in (before, after)]
            totals = [totals[0] + cost[0], totals[1] + cost[1]]
            print(f"| {count} | {name} | {cost[0]:.2f} | {cost[1]:.2f} |")
        print(f"| {count} | all {len(steps)} | {totals[0]:.2f} | {totals[1]:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
