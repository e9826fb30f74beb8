"""A local stand-in for an OpenAI-compatible chat-completions endpoint.

`chat_stub` serves POST /v1/chat/completions on 127.0.0.1 (a free port),
answers from a script per model and records every request. A script entry
is a verdict dict (sent as JSON in ``choices[0].message.content``), or one
of ``("status", code)``, ``("content", text)`` or ``("hang",)`` (no answer
until the test ends).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class ChatStub:
    def __init__(self) -> None:
        self.scripts: dict[str, deque] = defaultdict(deque)
        self.requests: list[dict] = []  # {"path", "headers", "body"}
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                script = stub.scripts[body.get("model")]
                entry = script.popleft() if script else ("status", 404)
                if isinstance(entry, dict):
                    self._send(200, _completion(body.get("model"), json.dumps(entry)))
                elif entry[0] == "content":
                    self._send(200, _completion(body.get("model"), entry[1]))
                elif entry[0] == "hang":
                    stub.release.wait(30)
                else:
                    self._send(entry[1], {"error": {"message": "scripted failure"}})

            def _send(self, status: int, data: dict) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, model: str, *entries) -> None:
        self.scripts[model].extend(entries)

    def models_asked(self) -> list[str]:
        return [r["body"]["model"] for r in self.requests]


def _completion(model: str | None, content: str) -> dict:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


@pytest.fixture
def chat_stub():
    stub = ChatStub()
    thread = threading.Thread(target=stub.server.serve_forever, daemon=True)
    thread.start()
    yield stub
    stub.release.set()
    stub.server.shutdown()
    stub.server.server_close()
    thread.join()
