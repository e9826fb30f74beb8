"""LLM judge (seed 002's third layer, after Gemini CLI's LoopDetectionService):
every few turns of a long agent run, another model reads the recent
conversation and says whether it is stuck; `llm_detected_loop` on the
`session` channel when it is confident enough.

When (Gemini CLI's schedule): turns count from the last `user` message (a
new request starts afresh, as Gemini CLI resets per prompt). From turn
`after_turns` (30) on, a `turn` event asks the judge when at least
`interval` turns passed since the last check; `interval` starts at
`default_interval` (10) and after each answer becomes
``round(min_interval + (max_interval - min_interval) * (1 - confidence))``
(rounding halves up): 5 turns after a confident answer, 15 after a calm one.

What (a chat-completions request to an OpenAI-compatible endpoint): a
system prompt (the judging criteria, in our words after Gemini CLI's), the
original request in ``<original_user_request>`` tags, the last
`history_messages` (20) messages of the conversation, then the question.
A message is what Gemini CLI counts as one history entry: a user message,
one turn's visible text and tool calls (as text), or the tool results that
followed. Reasoning is left out. As in Gemini CLI, assistant messages at
the end that hold only tool calls (calls whose results are not in yet) and
tool results at the start (their calls fell out of the window) are
dropped. The answer must be JSON ``{"analysis": str, "confidence": 0..1}``
(asked for with a JSON schema response format by default).

Verdict: a loop when the confidence reaches `threshold` (0.9). With a
`confirm_model`, that model is asked the same and must reach it too (its
analysis is reported); otherwise the confirming answer sets the interval.
An endpoint that fails (HTTP error, timeout, an answer that is not the
JSON asked for) counts as "no loop" and leaves the interval as it was, as
in Gemini CLI: a judge that is down must not stop the agent. Every query
is recorded as a `Checkpoint` (`check` names the model and its confidence
or its error), so failures stay visible without posing as detections.
After a detection checking goes on (Gemini CLI stops there; a monitor
keeps watching), on the interval the confirming confidence gives.

I/O: the detector decides when and what to ask; the HTTP call is the
`client` it is given (payload -> response JSON; `detector.chat_client`'s
`HttpChatClient` for a real endpoint, which `Monitor(..., judge_client=...)`
hands on). The detector reads no environment and opens no connection. The
call is synchronous: a checking turn waits for up to two requests.

Cost per event: O(len(text)) to append to the current message. Memory: at
most `history_messages` messages of at most `max_message_chars` characters
each, plus the one being written and the original request (same cap).
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .base import Detector, StreamContext
from .detection import Checkpoint, Detection
from .params import ConfigError, action_param, param

# A chat-completions request body -> the response body, parsed; raises JudgeError.
ChatClient = Callable[[dict], dict]

LOOP_TYPE = "llm_detected_loop"
MESSAGE = (
    "Loop detected: The AI analysis shows no meaningful progress. "
    "Clarify the goal or break into smaller steps. Judge ({model}, confidence {confidence:.2f}): {analysis}"
)

SYSTEM_PROMPT = """\
You review the transcript of an AI assistant working on a task and decide whether it is stuck: \
repeating itself without getting any closer to the user's goal.

Call it stuck only when both hold:
1. For at least 5 consecutive assistant actions (tool calls or replies) it repeats a pattern, and
2. the repetition changes nothing: same arguments, same outcomes, no new information.

Typical stuck patterns:
- a cycle of the same actions (edit, build, the same edit, the same build error, ...);
- the same tool called again with equivalent arguments (same file, same range, same query) \
and the same result each time;
- reply after reply restating the same plan, question or analysis without acting or deciding.

Not stuck, however repetitive it looks:
- one tool applied to different targets (other files, other paths, other records);
- several edits of one file at different places or with different text;
- reading or searching different things to gather information;
- retrying a failed step with changed arguments or another approach;
- re-running a build or test after changing code.

Compare the arguments and results of tool calls, not just the tool names. If the original \
request asks for batch work ("every file", "each module"), repeated calls with varying \
arguments are expected.

Answer with JSON only: {"analysis": "<your reasoning>", \
"confidence": <0.0 to 1.0, how sure you are that it is stuck>}"""

TASK_PROMPT = (
    "Is the assistant in the conversation above stuck in an unproductive loop? Take the original "
    "request into account. Answer in the JSON format asked for."
)

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "analysis": {"type": "string", "description": "why the conversation is or is not looping without progress"},
        "confidence": {"type": "number", "description": "0.0 to 1.0: how sure the judge is that it is stuck"},
    },
    "required": ["analysis", "confidence"],
    "additionalProperties": False,
}

RESPONSE_FORMATS = {
    "json_schema": {
        "type": "json_schema",
        "json_schema": {"name": "loop_check", "strict": True, "schema": ANSWER_SCHEMA},
    },
    "json_object": {"type": "json_object"},
    "none": None,
}


class JudgeError(Exception):
    """The judge gave no usable answer (unreachable, HTTP error, timeout, not the JSON asked for)."""


@dataclass(frozen=True)
class LLMJudgeParams:
    # Endpoint parameters are not tuned: every trial would query the endpoint again.
    base_url: str = param("", tune=False, doc="OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
    model: str = param("", tune=False, doc="the judging model")
    confirm_model: str = param("", tune=False, doc="a second model that must agree (empty: none)")
    # A key only by the name of its variable: profiles are exported and shared.
    api_key_env: str = param("", tune=False, doc="environment variable holding the API key (empty: no key)")
    timeout: float = param(30.0, low=0.1, high=600.0, tune=False, doc="seconds per request")
    response_format: str = param(
        "json_schema", choices=tuple(RESPONSE_FORMATS), tune=False, doc="how the JSON answer is asked for"
    )
    after_turns: int = param(30, low=1, high=1000, tune=False, doc="turns of a request before the first check")
    default_interval: int = param(10, low=1, high=100, tune=False, doc="turns between checks before any answer")
    min_interval: int = param(5, low=1, high=100, tune=False, doc="turns to the next check after a confidence of 1")
    max_interval: int = param(15, low=1, high=100, tune=False, doc="turns to the next check after a confidence of 0")
    threshold: float = param(0.9, low=0.5, high=1.0, tune=False, doc="confidence at which the judge's answer is a loop")
    history_messages: int = param(20, low=1, high=200, tune=False, doc="recent messages sent to the judge")
    max_message_chars: int = param(4000, low=100, high=100000, tune=False, doc="a longer message is cut")
    action: str = action_param("stop")


@dataclass
class _Message:
    role: str  # "user" (also tool results, which the endpoint takes as user text) or "assistant"
    kind: str  # "user", "assistant" or "tools"
    turn: int
    parts: list[str] = field(default_factory=list)
    chars: int = 0
    cut: int = 0  # characters left out past max_message_chars
    calls_only: bool = True  # an assistant message with tool calls and no text

    def add(self, text: str, cap: int) -> None:
        room = cap - self.chars
        if len(text) > room:
            self.cut += len(text) - max(room, 0)
            text = text[: max(room, 0)]
        if text:
            self.parts.append(text)
            self.chars += len(text)

    def text(self) -> str:
        body = "".join(self.parts)
        return body + (f"\n[... {self.cut} more characters]" if self.cut else "")


def parse_verdict(response: dict) -> tuple[str, float]:
    """(analysis, confidence) from a chat-completions response whose first
    choice's content is the JSON answer (a ```json fence around it is
    allowed); `JudgeError` when it is not that.

    >>> parse_verdict({"choices": [{"message": {"content": '{"analysis": "same edit", "confidence": 0.95}'}}]})
    ('same edit', 0.95)
    """
    try:
        content = response["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise JudgeError("the answer has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise JudgeError("choices[0].message.content is not text")
    content = content.strip()
    if content.startswith("```"):
        content = content.strip("`").removeprefix("json").strip()
    try:
        verdict = json.loads(content)
    except ValueError:
        raise JudgeError(f"the judge's answer is not JSON: {content[:80]!r}") from None
    confidence = verdict.get("confidence") if isinstance(verdict, dict) else None
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 <= confidence <= 1.0:
        raise JudgeError(f"the judge's confidence is not a number from 0 to 1: {confidence!r}")
    analysis = verdict.get("analysis")
    return (analysis if isinstance(analysis, str) else ""), float(confidence)


class LLMJudge(Detector):
    """Seed 002's semantic layer: a second model judges whether the agent is stuck."""

    name = "llm_judge"
    Params = LLMJudgeParams
    builtin: dict[str, dict] = {}  # needs an endpoint: off unless a profile configures one

    takes_client = True

    def __init__(self, params: LLMJudgeParams | None = None, *, client: ChatClient | None = None):
        super().__init__(params)
        p = self.params
        if not p.model:
            raise ConfigError(f"{self.name}.model: required: the name of the judging model")
        if p.min_interval > p.max_interval:
            raise ConfigError(f"{self.name}.min_interval: {p.min_interval} is above max_interval {p.max_interval}")
        if client is None:
            raise ConfigError(
                f"{self.name}: needs a chat client: "
                "Monitor(..., judge_client=detector.chat_client.judge_client_for(profile))"
            )
        self.client = client
        self.history: deque[_Message] = deque(maxlen=p.history_messages)
        self.current: _Message | None = None
        self.request = ""  # the original request: the last user message
        self.turns = 0  # turns since that message
        self.last_check = 0
        self.interval = p.default_interval

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        cap = self.params.max_message_chars
        if kind == "user":
            self._close()
            self.request = event["text"][:cap]
            self.turns, self.last_check, self.interval = 0, 0, self.params.default_interval
            message = _Message("user", "user", ctx.turn)
            message.add(event["text"], cap)
            self.history.append(message)
        elif kind == "turn":
            self._close()
            self.turns += 1
            if self.turns >= self.params.after_turns and self.turns - self.last_check >= self.interval:
                self.last_check = self.turns
                return self._check(ctx)
        elif kind == "content":
            message = self._open("assistant", ctx)
            message.add(event["text"], cap)
            message.calls_only = False
        elif kind == "tool_call":
            args = json.dumps(event.get("args") or {}, ensure_ascii=False, sort_keys=True)
            self._open("assistant", ctx).add(f"\n[tool call] {event['name']} {args}", cap)
        elif kind == "tool_result":
            status = {True: " ok", False: " failed"}.get(event.get("ok"), "")
            self._open("tools", ctx).add(f"\n[tool result{status}] {event.get('output', '')}", cap)
        return []

    def _open(self, kind: str, ctx: StreamContext) -> _Message:
        if self.current is None or self.current.kind != kind:
            self._close()
            self.current = _Message("assistant" if kind == "assistant" else "user", kind, ctx.turn)
        return self.current

    def _close(self) -> None:
        if self.current is not None:
            self.history.append(self.current)
            self.current = None

    def _messages(self) -> tuple[list[dict], int | None]:
        """The chat messages a check sends now, and the turn of the oldest
        history message in them (None when there is none)."""
        window = list(self.history)
        while window and window[-1].kind == "assistant" and window[-1].calls_only:
            window.pop()
        while window and window[0].kind == "tools":
            window.pop(0)
        messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        if self.request:
            request = f"<original_user_request>\n{self.request}\n</original_user_request>"
            messages.append({"role": "user", "content": request})
        elif window and window[0].role == "assistant":
            messages.append({"role": "user", "content": "Recent conversation history:"})
        messages.extend({"role": m.role, "content": m.text().strip()} for m in window)
        messages.append({"role": "user", "content": TASK_PROMPT})
        return messages, (window[0].turn if window else None)

    def _ask(self, model: str, messages: list[dict], ctx: StreamContext, start: int) -> tuple[str, float] | None:
        payload: dict = {"model": model, "messages": messages, "temperature": 0}
        response_format = RESPONSE_FORMATS[self.params.response_format]
        if response_format is not None:
            payload["response_format"] = response_format
        try:
            analysis, confidence = parse_verdict(self.client(payload))
        except JudgeError as exc:
            ctx.record_checkpoint(self._checkpoint(ctx, start, f"{model}: error: {exc}", ""))
            return None
        result = LOOP_TYPE if confidence >= self.params.threshold else ""
        ctx.record_checkpoint(self._checkpoint(ctx, start, f"{model}: confidence {confidence:g}", result))
        return analysis, confidence

    def _checkpoint(self, ctx: StreamContext, start: int, check: str, result: str) -> Checkpoint:
        return Checkpoint(self.name, "session", self.turns, start, ctx.turn, check, result, turn=ctx.turn)

    def _check(self, ctx: StreamContext) -> list[Detection]:
        p = self.params
        messages, first_turn = self._messages()
        start = first_turn if first_turn is not None else ctx.turn
        answer = self._ask(p.model, messages, ctx, start)
        if answer is None:
            return []
        model = p.model
        if answer[1] >= p.threshold and p.confirm_model:
            model = p.confirm_model
            answer = self._ask(model, messages, ctx, start)
            if answer is None:
                return []
        analysis, confidence = answer
        self.interval = math.floor(p.min_interval + (p.max_interval - p.min_interval) * (1 - confidence) + 0.5)
        if confidence < p.threshold:
            return []
        return [
            Detection(
                detector=self.name,
                type=LOOP_TYPE,
                channel="session",
                start=start,
                end=ctx.turn,
                at=ctx.turn,
                unit="",
                period=0,
                repeats=0,
                action=p.action,
                message=MESSAGE.format(model=model, confidence=confidence, analysis=analysis or "(no analysis)"),
                turn=ctx.turn,
                extra={"analysis": analysis, "confidence": confidence, "model": model, "turns_in_request": self.turns},
            )
        ]
