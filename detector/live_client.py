"""`LiveSession`: a producer's client for the lab's live ingest
(docs/api.md, "Live ingest"). No Django: the standard library for
HTTP, and the `websockets` package for the WebSocket transport (imported
only when that transport is used).

Each `send(events)` is one message `{"seq": N, "events": [...]}`, N counting
from 1. A message stays in `pending` until the lab acknowledges it. When the
socket is lost the client reconnects, reads `{"resume": LAST_ACKED}`, drops
the messages that covers and sends the others again in order; over HTTP a
message whose answer was lost is posted again as it was. The lab
acknowledges a seq it already stored without storing it twice, so every
event is stored exactly once.

Detections arrive as the lab fires them (`detections`). The first whose
action is one of `stop_actions` makes this call and every later one raise
`LoopDetected` (the lab keeps the session `stopped`; the producer must
abort). Over the socket up to `window` messages are in flight before `send`
waits for an acknowledgement: with window 1 each send waits for its answer
(a message's detections come before its ack), a larger window lets the
model's stream run ahead of the lab. Not thread-safe: one producer thread.

Batching: the lab's cost is per message more than per event, so `send`
gathers events into one message for up to `linger` seconds (from the first
event waiting) or `max_batch` events, and sends at once after a tool call,
a tool result or a finish, and on `flush`, `poll` past the linger, and
`close`. `linger=0` makes every `send` its own message. Detections that
arrived are read at every call either way.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable

from .events import validate_event
from .loop_signal import STOP_ACTIONS, LoopDetected

TRANSPORTS = ("ws", "http")
SEND_AT_ONCE = ("tool_call", "tool_result", "finish")  # a batch holding one of these goes without lingering

# Close codes of /ws/ingest after the handshake that no reconnect can cure.
FINAL_CLOSE_CODES = {
    4401: "not signed in (check the API token)",
    4403: "not allowed to stream into this session",
    4404: "no such session",
    4409: "the session takes no more events, or another producer took it over",
}


class LiveSessionError(Exception):
    """The lab refused a call (`status`, `field` when it named one) or could
    not be reached within the retries."""

    def __init__(self, message: str, *, status: int | None = None, field: str | None = None):
        super().__init__(message)
        self.status = status
        self.field = field


def retry_delay(attempt: int) -> float:
    """Seconds to wait before retry number `attempt` (from 0): 0.1 s doubling, at most 2 s."""
    return min(0.1 * 2**attempt, 2.0)


class LiveSession:
    """One live session of the lab at `url` (e.g. ``http://127.0.0.1:8000``),
    streamed into with API token `token`. Without `session_id` a new live
    session is created (`POST /api/sessions?live=1&model=`); with one, an
    existing session is continued: the socket learns where from `resume`,
    HTTP needs `acked`, the last message number the lab acknowledged."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        model: str | None = None,
        title: str | None = None,
        session_id: int | None = None,
        acked: int = 0,
        transport: str = "ws",
        stop_actions: Iterable[str] = STOP_ACTIONS,
        window: int = 32,
        retries: int = 5,
        timeout: float = 30.0,
        linger: float = 0.25,
        max_batch: int = 256,
    ):
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {TRANSPORTS}, not {transport!r}")
        if window < 1:
            raise ValueError("window must be at least 1")
        if linger < 0 or max_batch < 1:
            raise ValueError("linger must be at least 0 and max_batch at least 1")
        self.linger = linger
        self.max_batch = max_batch
        self._batch: list[dict] = []  # events waiting to be sent as one message
        self._batch_since = 0.0  # time.monotonic() when the first of them came
        self.url = url.rstrip("/")
        self.token = token
        self.transport = transport
        self.stop_actions = tuple(stop_actions)
        self.window = window
        self.retries = retries
        self.timeout = timeout
        self.seq = acked  # the last message number given out
        self.acked = acked
        self.pending: dict[int, list[dict]] = {}  # sent, not yet acknowledged, in seq order
        self.detections: list[dict] = []
        self.stop: dict | None = None  # the first stop-level detection
        self.state: str | None = None  # as the lab last said: every HTTP answer; the socket only at close
        self.resumes: list[int] = []  # the `resume` of each socket connection, in order
        self._detection_ids: set[int] = set()
        self._socket = None
        self._sent_upto = 0  # the last seq written to the current socket
        self.session_id = session_id if session_id is not None else self._create(model, title)

    # -- the producer's calls ------------------------------------------------

    def send(self, events: dict | list[dict]) -> list[dict]:
        """Stream `events` (one event or a list): added to the batch, sent
        as the next message when it is due (see the module docstring); the
        detections that arrived during the call. Raises `LoopDetected` once a
        stop-level detection has arrived, `EventError` for an invalid event
        (nothing is sent then)."""
        events = [events] if isinstance(events, dict) else list(events)
        self._raise_if_stopped()
        for event in events:
            validate_event(event)
        if not events:
            return self.poll()
        if not self._batch:
            self._batch_since = time.monotonic()
        self._batch += events
        if any(event["type"] in SEND_AT_ONCE for event in events):
            return self._send_batch()
        return self.poll()

    def _send_batch(self) -> list[dict]:
        """Send the waiting events as the next message."""
        before = len(self.detections)
        if self.transport == "ws" and not self.resumes:
            self._on_socket(lambda: None)  # learn where the lab stands before numbering the first message
        events, self._batch = self._batch, []
        self.seq += 1
        self.pending[self.seq] = events
        if self.transport == "http":
            self._post_pending()
        else:
            seq = self.seq
            self._on_socket(lambda: self._send_message(seq))
        self._raise_if_stopped()
        return self.detections[before:]

    def poll(self) -> list[dict]:
        """The detections that arrived since the last call, without waiting
        (over HTTP every answer is read at once: nothing waits); sends the
        waiting events if their batch is due."""
        batch = self._batch
        if batch and (len(batch) >= self.max_batch or time.monotonic() - self._batch_since >= self.linger):
            return self._send_batch()
        before = len(self.detections)
        if self.transport == "ws" and (self._socket is not None or self.pending):
            self._on_socket(lambda: self._read_all(wait=False))
        self._raise_if_stopped()
        return self.detections[before:]

    def flush(self) -> list[dict]:
        """Send the waiting events and wait until the lab acknowledged every
        message sent; the detections that arrived meanwhile."""
        before = len(self.detections)
        if self._batch:
            self._send_batch()
        self._flush()
        self._raise_if_stopped()
        return self.detections[before:]

    def close(self) -> None:
        """End the session in the lab (state `closed`: it takes no more
        events) once every event is sent and acknowledged, and disconnect."""
        if self._batch:
            self._send_batch()
        self._flush()
        if self.transport == "http":
            self._answer(self._request(f"/api/sessions/{self.session_id}/events", {"close": True}))
        else:
            self._on_socket(self._close_message)
        self.disconnect()

    def disconnect(self) -> None:
        """Drop the socket; the session stays open (a new `LiveSession` with
        its `session_id` continues it)."""
        if self._socket is not None:
            socket, self._socket = self._socket, None
            socket.close()

    def __enter__(self) -> LiveSession:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        # A clean exit ends the session; an exception (a loop among them)
        # leaves it as it is, e.g. `stopped`, for the dashboard to show.
        if kind is None:
            self.close()
        else:
            self.disconnect()

    # -- detections and acknowledgements -------------------------------------

    def _raise_if_stopped(self) -> None:
        if self.stop is not None:
            raise LoopDetected(self.stop, origin="server")

    def _detected(self, detection: dict) -> None:
        ident = detection.get("id")
        if ident is not None:
            if ident in self._detection_ids:
                return  # sent again after a reconnect
            self._detection_ids.add(ident)
        self.detections.append(detection)
        if self.stop is None and detection.get("action") in self.stop_actions:
            self.stop = detection

    def _acknowledged(self, seq: int) -> None:
        self.acked = max(self.acked, seq)
        for number in [n for n in self.pending if n <= seq]:
            del self.pending[number]

    def _handle(self, message: object) -> None:
        """One message of the lab (socket)."""
        if not isinstance(message, dict):
            raise LiveSessionError(f"the lab sent {message!r}, not a JSON object")
        if "error" in message:
            raise LiveSessionError(
                f"the lab refused message {message.get('seq')}: {message['error']}", field=message.get("field")
            )
        if "detection" in message:
            self._detected(message["detection"])
        if "ack" in message:
            self._acknowledged(message["ack"])
        if "state" in message:
            self.state = message["state"]

    def _answer(self, answer: dict) -> None:
        """The answer to an HTTP message: `{"ack", "detections", "state"}`."""
        for detection in answer.get("detections", []):
            self._detected(detection)
        self._acknowledged(answer["ack"])
        self.state = answer.get("state")

    # -- HTTP ----------------------------------------------------------------

    def _create(self, model: str | None, title: str | None) -> int:
        query = {"live": "1", "model": model or "", "title": title or ""}
        answer = self._request("/api/sessions?" + urllib.parse.urlencode(query), None)
        return answer["sessions"][0]["id"]

    def _post_pending(self) -> None:
        """Post every unacknowledged message in order (more than the newest
        one only after a call that gave up: the lab needs them without a gap)."""
        for seq in list(self.pending):
            message = {"seq": seq, "events": self.pending[seq]}
            self._answer(self._request(f"/api/sessions/{self.session_id}/events", message))

    def _request(self, path: str, body: dict | None) -> dict:
        """POST `body` as JSON; the JSON answer. Network errors and 5xx
        answers are retried as they are; a 4xx is a `LiveSessionError`."""
        request = urllib.request.Request(
            self.url + path,
            data=b"" if body is None else json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                if exc.code < 500 or attempt == self.retries:
                    raise _refusal(exc) from None
            except (OSError, ValueError) as exc:  # URLError, resets, timeouts; a body that is not JSON
                if attempt == self.retries:
                    raise LiveSessionError(f"POST {self.url}{path} failed {attempt + 1} times: {exc}") from exc
            time.sleep(retry_delay(attempt))
        raise AssertionError("unreachable")  # the last attempt returns or raises

    # -- WebSocket -----------------------------------------------------------

    def _on_socket(self, operation: Callable[[], None]) -> None:
        """Run `operation` on a connected socket, reconnecting (and resuming)
        when the connection is lost, up to `retries` times in a row."""
        try:
            from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
        except ImportError:
            raise LiveSessionError(
                "the WebSocket transport needs the `websockets` package (pip install websockets); "
                "or use transport='http'"
            ) from None

        for attempt in range(self.retries + 1):
            try:
                if self._socket is None:
                    self._connect()
                operation()
                return
            except InvalidStatus as exc:
                if exc.response.status_code >= 500 and attempt < self.retries:  # the lab restarting: try again
                    time.sleep(retry_delay(attempt))
                    continue
                raise LiveSessionError(
                    f"the lab refused the ingest socket of session {self.session_id} "
                    f"(HTTP {exc.response.status_code}): check the token, the session id and that the session is open",
                    status=exc.response.status_code,
                ) from None
            except (ConnectionClosed, InvalidHandshake, OSError) as exc:  # lost, or cut during the handshake
                self.disconnect()
                code = exc.rcvd.code if isinstance(exc, ConnectionClosed) and exc.rcvd else None
                if code in FINAL_CLOSE_CODES:
                    raise LiveSessionError(
                        f"the lab closed the ingest socket of session {self.session_id}: {FINAL_CLOSE_CODES[code]}",
                        status=code,
                    ) from None
                if attempt == self.retries:
                    raise LiveSessionError(f"lost the ingest socket {attempt + 1} times in a row: {exc}") from exc
                time.sleep(retry_delay(attempt))

    def _connect(self) -> None:
        from websockets.sync.client import connect  # present: `_on_socket` checked

        scheme, _, rest = self.url.partition("://")
        url = f"{'wss' if scheme == 'https' else 'ws'}://{rest}/ws/ingest/{self.session_id}"
        # entered as a context manager: websockets 17 deprecates a bare connect(), 18 will need it
        self._socket = connect(
            url, additional_headers={"Authorization": f"Bearer {self.token}"}, open_timeout=self.timeout
        ).__enter__()
        first = self._receive(self.timeout)
        if not isinstance(first, dict) or not isinstance(first.get("resume"), int):
            raise LiveSessionError(f"the lab's first message was {first!r}, not {{'resume': N}}")
        resume = first["resume"]
        self.resumes.append(resume)
        self._acknowledged(resume)
        self.seq = max(self.seq, resume)
        self._sent_upto = resume
        for seq in list(self.pending):  # what the lab has not stored yet, in order
            self._send_message(seq, wait=False)

    def _receive(self, timeout: float) -> object:
        try:
            text = self._socket.recv(timeout=timeout)
        except TimeoutError:
            raise LiveSessionError(f"the lab sent nothing for {timeout} s") from None
        return json.loads(text)

    def _send_message(self, seq: int, *, wait: bool = True) -> None:
        """Write message `seq` unless this socket has it already (a reconnect
        sends every pending message), then read what arrived; with `wait`,
        block while `window` messages are unacknowledged."""
        if seq > self._sent_upto and seq in self.pending:
            self._socket.send(json.dumps({"seq": seq, "events": self.pending[seq]}))
            self._sent_upto = seq
        if wait:
            self._read_all(wait=False)
            while len(self.pending) >= self.window:
                self._handle(self._receive(self.timeout))

    def _read_all(self, *, wait: bool) -> None:
        """Handle every message that has arrived; with `wait`, until nothing is pending."""
        while True:
            try:
                text = self._socket.recv(timeout=0)
            except TimeoutError:
                if not (wait and self.pending):
                    return
                self._handle(self._receive(self.timeout))
                continue
            self._handle(json.loads(text))

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.transport == "http":
            self._post_pending()
        else:
            self._on_socket(lambda: self._read_all(wait=True))

    def _close_message(self) -> None:
        from websockets.exceptions import ConnectionClosedOK

        self._socket.send(json.dumps({"close": True}))
        try:
            while self.state != "closed":
                self._handle(self._receive(self.timeout))
        except ConnectionClosedOK:
            pass  # the lab ends the socket after {"state": "closed"}


def _refusal(error: urllib.error.HTTPError) -> LiveSessionError:
    """The lab's error body (`{"error", "field", "line"}`) as an exception."""
    try:
        body = json.loads(error.read())
    except ValueError:
        body = {}
    message = body.get("error") if isinstance(body, dict) else None
    return LiveSessionError(
        f"{error.url}: HTTP {error.code}: {message or error.reason}",
        status=error.code,
        field=body.get("field") if isinstance(body, dict) else None,
    )
