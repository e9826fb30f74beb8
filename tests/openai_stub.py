"""Real model outputs as OpenAI streams, and a stub upstream that serves them.

`row_events(row)` is a corpus row as LoopGuard events, `reference_stop`
where a plain Monitor stops them (the expected cut, whatever the detectors'
tuning of the day). `openai_chunks(row)` cuts a corpus row (fixtures/corpus) into the
`chat.completion.chunk` records an OpenAI-compatible server would stream:
a role chunk, 4-character deltas, a finish chunk. `StubUpstream` is an
OpenAI-compatible server on 127.0.0.1 (http.server in a thread) that
answers `POST /v1/chat/completions` with those chunks as server-sent events,
or with the whole completion when `stream` is false. It records the requests
and how many chunks it managed to write before the client hung up; its
socket buffer is small, so a client that stops reading is noticed.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from detector.monitor import Monitor
from tests.shared_paths import shared_path

DELTA_SIZE = 4
SEND_BUFFER = 4096  # bytes the stub's socket may hold: a client that stops reading is noticed early


def corpus_row(row_id: str) -> dict:
    with shared_path("corpus", "real_small.jsonl").open(encoding="utf-8") as rows:
        return next(row for row in map(json.loads, rows) if row["id"] == row_id)


def row_events(row: dict, size: int = DELTA_SIZE) -> list[dict]:
    """The row as a producer streams it: a turn, then `size`-character deltas
    (event k >= 1 is the text of chunk k of `openai_chunks`)."""
    text = row["text"]
    return [
        {"type": "turn"},
        *({"type": row["channel"], "text": text[i : i + size]} for i in range(0, len(text), size)),
    ]


def reference_stop(events: list[dict], profile: str = "default") -> tuple[int, dict]:
    """Where a plain Monitor of `profile` stops `events`: the index of the
    event that fired the first stop-level detection, and that detection."""
    monitor = Monitor(profile)
    for index, event in enumerate(events):
        for detection in monitor.feed(event):
            if detection.action == "stop":
                return index, detection.to_dict()
    raise AssertionError(f"the {profile} profile does not stop these {len(events)} events")


def chunk(row: dict, delta: dict, finish: str | None = None) -> dict:
    return {
        "id": f"chatcmpl-{row['id']}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": row["model"],
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def openai_chunks(row: dict, size: int = DELTA_SIZE) -> list[dict]:
    """The row's text as a stream: chunk 0 has the role, chunk k (k >= 1) the
    k-th `size`-character delta, the last one the finish reason `stop`."""
    key = "reasoning_content" if row["channel"] == "reasoning" else "content"
    text = row["text"]
    deltas = [chunk(row, {key: text[i : i + size]}) for i in range(0, len(text), size)]
    return [chunk(row, {"role": "assistant", "content": ""}), *deltas, chunk(row, {}, finish="stop")]


def openai_completion(row: dict) -> dict:
    """The row as a whole (non-streamed) chat completion."""
    return {
        "id": f"chatcmpl-{row['id']}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": row["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": row["text"]}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": len(row["text"]) // 4, "total_tokens": 0},
    }


class StubUpstream:
    """`with StubUpstream(row) as stub:` serves `row` at `stub.url` (ends in /v1).
    Another API's answers: `records` streamed (dicts, or (event name, dict)
    pairs) and `whole` answered when the request does not stream."""

    def __init__(self, row: dict, records: list | None = None, whole: dict | None = None):
        self.row = row
        self.chunks = records if records is not None else openai_chunks(row)
        self.whole = whole if whole is not None else openai_completion(row)
        self.requests: list[dict] = []  # {"path", "authorization", "body"} of each request
        self.headers: list[dict] = []  # every header of each request
        self.sent = 0  # chunks written before the stream ended or the client hung up
        self.hung_up = False  # the client closed the connection before the last chunk
        self.done = threading.Event()  # set when the last response has been written (or cut)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> StubUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        stub: StubUpstream = self.server.stub
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        stub.requests.append({"path": self.path, "authorization": self.headers.get("Authorization"), "body": body})
        stub.headers.append(dict(self.headers))
        try:
            if body.get("stream"):
                self._stream(stub)
            else:
                self._json(stub.whole)
        finally:
            stub.done.set()

    def _json(self, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, stub: StubUpstream) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes
        try:
            for record in stub.chunks:
                event, record = record if isinstance(record, tuple) else (None, record)
                self.wfile.write((f"event: {event}\n" if event else "").encode())
                self.wfile.write(f"data: {json.dumps(record)}\n\n".encode())
                stub.sent += 1
            self.wfile.write(b"data: [DONE]\n\n")
        except (BrokenPipeError, ConnectionResetError):
            stub.hung_up = True

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's signature
        pass  # keep the test output clean
