"""`LiveSession`: a producer's client for the lab's live ingest
(docs/api.md, "Live ingest"). No Django: the standard library for
HTTP, and the `websockets` package for the WebSocket transport (imported
only when that transport is used).

Each `send(events)` is one message `{"seq": N, "events": [...]}`, N counting
from 1. A message stays in `pending` until the lab acknowledges it: an
`{"ack": N}` acknowledges every message up to N (the socket speaks protocol
3: the lab answers the messages it stored together with one ack, and holds
that ack up to a second for the messages after them, unless a message asks
for it at once with `"ack_now": true`; this client asks whenever it is
going to wait: the message `flush` or `close` sends, one holding a tool
call, a tool result or a finish, and any sent with half the `window` or
more unacknowledged; a `flush` with nothing left to send asks with a bare
`{"ack_now": true}`, which a lab of protocol 3 announces it takes in its
`resume`). When the
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

Refusals raise a `LiveSessionError` subclass, one per cause, over either
transport: `NotAuthenticated` (HTTP 401, close 4401), `NotAllowed` (403,
4403), `SessionNotFound` (404, 4404), `SessionClosed` (409, 4409: closed or
taken over by another producer; never by this client's own earlier
connection, since each socket names the client and counts its connections,
docs/api.md), `MessageTooBig` (413, close 1009),
`QuotaUsedUp` (429; `retry_after` seconds), `MessageRefused` (the lab named
the message's `seq` and `field`). A wait the lab asks for (`Retry-After`,
`retry_after`) that fits in `timeout` is waited, then the message is sent
again; a longer one raises with `retry_after`. Reconnects back off
exponentially with jitter, so that producers cut off together do not come
back together. A `send` that raised may be called again with the same
events: they are not batched again and their message keeps its number, so
the lab stores them once.
"""

from __future__ import annotations

import json
import random
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable

from .events import validate_event
from .loop_signal import STOP_ACTIONS, LoopDetected

TRANSPORTS = ("ws", "http")
PROTOCOL = 3  # of the socket: one `{"ack": N}` covers every message up to N, held a while unless asked for
SEND_AT_ONCE = ("tool_call", "tool_result", "finish")  # a batch holding one of these goes without lingering

# Close codes of /ws/ingest after the handshake that no reconnect can cure.
FINAL_CLOSE_CODES = {
    4401: "not signed in (check the API token)",
    4403: "not allowed to stream into this session",
    4404: "no such session",
    4409: "the session takes no more events, or another producer took it over",
    1009: "a message was over the lab's size limit (send fewer events at a time)",
}


class LiveSessionError(Exception):
    """The lab refused a call (`status`: the HTTP status or socket close
    code; `field` and `seq` when it named them; `retry_after`, seconds, when
    only time helps) or could not be reached within the retries."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        field: str | None = None,
        seq: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.field = field
        self.seq = seq
        self.retry_after = retry_after


class NotAuthenticated(LiveSessionError):
    """No valid API token (HTTP 401, close 4401)."""


class NotAllowed(LiveSessionError):
    """The token's user may not stream into this session (403, 4403)."""


class SessionNotFound(LiveSessionError):
    """No such session, or one of a project the token does not reach (404, 4404)."""


class SessionClosed(LiveSessionError):
    """The session takes no more events, or another producer took it over (409, 4409)."""


class MessageTooBig(LiveSessionError):
    """A message over the lab's size limit (413, close 1009): send fewer events at a time."""


class QuotaUsedUp(LiveSessionError):
    """The token's daily quota is used up (429): `retry_after` seconds to wait."""


class MessageRefused(LiveSessionError):
    """The lab refused one message (`seq`, `field`); nothing of it was stored."""


_REFUSALS: dict[int, type[LiveSessionError]] = {
    401: NotAuthenticated,
    4401: NotAuthenticated,
    403: NotAllowed,
    4403: NotAllowed,
    404: SessionNotFound,
    4404: SessionNotFound,
    409: SessionClosed,
    4409: SessionClosed,
    413: MessageTooBig,
    1009: MessageTooBig,
    429: QuotaUsedUp,
}


def refusal_class(status: int | None) -> type[LiveSessionError]:
    """The `LiveSessionError` subclass of an HTTP status or a close code."""
    return _REFUSALS.get(status, LiveSessionError)


RETRY_BASE = 0.1  # seconds before the first retry
RETRY_CAP = 2.0  # seconds between retries at most


def retry_delay(attempt: int) -> float:
    """Seconds to wait before retry number `attempt` (from 0): 0.1 s doubling,
    at most 2 s, of which a random half ("equal jitter"): clients cut off at
    the same moment spread out instead of returning as one herd."""
    ceiling = min(RETRY_BASE * 2**attempt, RETRY_CAP)
    return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - spreading, not secrecy


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
        self._ack_now: set[int] = set()  # pending messages that ask for their ack at once (`"ack_now"`)
        self.detections: list[dict] = []
        self.stop: dict | None = None  # the first stop-level detection
        self.state: str | None = None  # as the lab last said: every HTTP answer; the socket only at close
        self.resumes: list[int] = []  # the `resume` of each socket connection, in order
        self._detection_ids: set[int] = set()
        self._socket = None
        # Named in each socket's query string: the lab lets a connection of
        # this client take over only from an earlier one of this client.
        self._producer = secrets.token_hex(8)
        self._connections = 0
        self._sent_upto = 0  # the last seq written to the current socket
        self._lab_holds_acks = False  # the socket's lab said protocol 3 (`resume`): it takes a bare ack_now
        self._unfinished: list[dict] | None = None  # the events of a `send` that raised
        self.session_id = session_id if session_id is not None else self._create(model, title)

    # -- the producer's calls ------------------------------------------------

    def send(self, events: dict | list[dict]) -> list[dict]:
        """Stream `events` (one event or a list): added to the batch, sent
        as the next message when it is due (see the module docstring); the
        detections that arrived during the call. Raises `LoopDetected` once a
        stop-level detection has arrived, `EventError` for an invalid event
        (nothing is sent then), a `LiveSessionError` for a refusal. Called
        again with the same events after it raised, it adds nothing to the
        batch and sends what is waiting (the same message, same seq): stored
        once, whether or not the first try reached the lab."""
        events = [events] if isinstance(events, dict) else list(events)
        self._raise_if_stopped()
        for event in events:
            validate_event(event)
        if not events:
            return self.poll()
        retried = self._unfinished == events  # already batched (or numbered) by the call that raised
        self._unfinished = events
        if not retried:
            if not self._batch:
                self._batch_since = time.monotonic()
            self._batch += events
        if retried or any(event["type"] in SEND_AT_ONCE for event in events):
            found = self._send_batch(ack_now=True)
        else:
            found = self.poll()
        self._unfinished = None
        return found

    def _send_batch(self, *, ack_now: bool = False) -> list[dict]:
        """Send the waiting events as the next message (and any message a
        call that raised left unacknowledged); `ack_now`: it asks for its ack
        at once (the caller is going to wait for it, or soon may)."""
        before = len(self.detections)
        if self.transport == "ws" and not self.resumes:
            self._on_socket(lambda: None)  # learn where the lab stands before numbering the first message
        if self._batch:
            events, self._batch = self._batch, []
            self.seq += 1
            self.pending[self.seq] = events
            if ack_now:
                self._ack_now.add(self.seq)
        seq = self.seq
        if self.transport == "http":
            self._post_pending()
        elif self.pending:
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
            self._send_batch(ack_now=True)
        self._flush()
        self._raise_if_stopped()
        return self.detections[before:]

    def close(self) -> None:
        """End the session in the lab (state `closed`: it takes no more
        events) once every event is sent and acknowledged, and disconnect."""
        if self._batch:
            self._send_batch(ack_now=True)
        if self.transport == "http":
            self._flush()
            self._answer(self._request(f"/api/sessions/{self.session_id}/events", {"close": True}))
        else:
            # the lab answers the close after every message before it, acks
            # included (a held one too): nothing to wait for before sending it
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
        if self._ack_now:
            self._ack_now = {asked for asked in self._ack_now if asked > self.acked}
        for number in [n for n in self.pending if n <= seq]:
            del self.pending[number]

    def _drop(self, seq: int) -> None:
        """Forget message `seq`, which the lab refused (nothing of it stored):
        the later pending messages move down a number, to be sent again."""
        later = sorted(n for n in self.pending if n > seq)
        del self.pending[seq]
        for number in later:
            self.pending[number - 1] = self.pending.pop(number)
        self.seq -= 1

    def _handle(self, message: object) -> None:
        """One message of the lab (socket). An error ends this connection
        (the messages sent after the refused one are answered with gaps): the
        next call reconnects and sends what is pending again."""
        if not isinstance(message, dict):
            raise LiveSessionError(f"the lab sent {message!r}, not a JSON object")
        if "error" in message:
            self.disconnect()
            seq, field = message.get("seq"), message.get("field")
            text = f"the lab refused message {seq}: {message['error']}"
            if message.get("retry_after") is not None:  # kept: sent again once the wait is over
                raise QuotaUsedUp(text, status=429, field=field, seq=seq, retry_after=message["retry_after"])
            if "limit" in message:  # over the size limit: the biggest pending message can never be stored
                seq = max(self.pending, key=lambda n: len(json.dumps(self.pending[n])), default=None)
                if seq is not None:
                    self._drop(seq)
                raise MessageTooBig(f"message {seq}: {message['error']}", status=1009, seq=seq)
            if seq in self.pending:
                self._drop(seq)
            raise MessageRefused(text, status=message.get("status"), field=field, seq=seq)
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
            try:
                answer = self._request(f"/api/sessions/{self.session_id}/events", message)
            except (MessageRefused, MessageTooBig) as exc:
                self._drop(seq)  # nothing of it was stored: the next message takes its number
                exc.seq = seq
                raise
            self._answer(answer)

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
            delay = retry_delay(attempt)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                refusal = _refusal(exc)
                retryable = exc.code >= 500 or (refusal.retry_after is not None and refusal.retry_after <= self.timeout)
                if not retryable or attempt == self.retries:
                    raise refusal from None
                delay = max(delay, refusal.retry_after or 0)  # the lab says when: not before
            except (OSError, ValueError) as exc:  # URLError, resets, timeouts; a body that is not JSON
                if attempt == self.retries:
                    raise LiveSessionError(f"POST {self.url}{path} failed {attempt + 1} times: {exc}") from exc
            time.sleep(delay)
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
            except QuotaUsedUp as exc:
                if exc.retry_after > self.timeout or attempt == self.retries:
                    raise
                time.sleep(exc.retry_after)  # then reconnect: the pending messages go again
            except InvalidStatus as exc:
                status = exc.response.status_code
                if status >= 500 and attempt < self.retries:  # the lab restarting: try again
                    retry_after = _seconds(exc.response.headers.get("Retry-After"))
                    time.sleep(max(retry_delay(attempt), min(retry_after or 0, self.timeout)))
                    continue
                raise refusal_class(status)(
                    f"the lab refused the ingest socket of session {self.session_id} "
                    f"(HTTP {status}): check the token, the session id and that the session is open",
                    status=status,
                ) from None
            except (ConnectionClosed, InvalidHandshake, OSError) as exc:  # lost, or cut during the handshake
                self.disconnect()
                code = exc.rcvd.code if isinstance(exc, ConnectionClosed) and exc.rcvd else None
                if code in FINAL_CLOSE_CODES:
                    raise refusal_class(code)(
                        f"the lab closed the ingest socket of session {self.session_id}: {FINAL_CLOSE_CODES[code]}",
                        status=code,
                    ) from None
                if attempt == self.retries:
                    raise LiveSessionError(f"lost the ingest socket {attempt + 1} times in a row: {exc}") from exc
                time.sleep(retry_delay(attempt))

    def _connect(self) -> None:
        from websockets.sync.client import connect  # present: `_on_socket` checked

        scheme, _, rest = self.url.partition("://")
        self._connections += 1
        query = urllib.parse.urlencode(
            {"producer": self._producer, "connection": self._connections, "protocol": PROTOCOL}
        )
        url = f"{'wss' if scheme == 'https' else 'ws'}://{rest}/ws/ingest/{self.session_id}?{query}"
        # entered as a context manager: websockets 17 deprecates a bare connect(), 18 will need it
        self._socket = connect(
            url, additional_headers={"Authorization": f"Bearer {self.token}"}, open_timeout=self.timeout
        ).__enter__()
        first = self._receive(self.timeout)
        if not isinstance(first, dict) or not isinstance(first.get("resume"), int):
            raise LiveSessionError(f"the lab's first message was {first!r}, not {{'resume': N}}")
        resume = first["resume"]
        self._lab_holds_acks = first.get("protocol") == PROTOCOL
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
            message: dict = {"seq": seq, "events": self.pending[seq]}
            if seq in self._ack_now or 2 * len(self.pending) >= self.window:
                message["ack_now"] = True
            self._socket.send(json.dumps(message))
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
            self._on_socket(self._ask_and_wait)

    def _ask_and_wait(self) -> None:
        """Wait until nothing is pending, asking a lab that holds acks for its held one."""
        if self._lab_holds_acks:
            self._socket.send(json.dumps({"ack_now": True}))
        self._read_all(wait=True)

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
    kind = refusal_class(error.code)
    if kind is LiveSessionError and 400 <= error.code < 500:
        kind = MessageRefused
    return kind(
        f"{error.url}: HTTP {error.code}: {message or error.reason}",
        status=error.code,
        field=body.get("field") if isinstance(body, dict) else None,
        retry_after=_seconds(error.headers.get("Retry-After")),
    )


def _seconds(header: str | None) -> float | None:
    """A `Retry-After` of seconds (the lab's form), or None."""
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None
