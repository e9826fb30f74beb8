"""Tool intent without a call (seed 001's TOOL_INTENT_NUDGE): a turn whose
visible text announces a tool action ("Let me search the logs", "I'll read
the file", "我来查一下") but makes no tool call gets a nudge telling the
model to call the tool. At most `max_nudges` in a row; after that the
detector gives up until the streak ends (a turn with a tool call, or a text
reply that announces nothing).

`tool_intent_phrase` reads prose only: fenced and indented code, inline
code spans, block quotes and quoted strings are removed first, and, as in
the seed's `llm_signals_tool_intent`, conversational phrases ("let me
explain", "let me know", "让我解释") rule a text out, and so do offers that
wait for the user ("if you want", "shall I", "需要我"). Replies longer than
`max_text_chars` are final answers, not announcements, and are skipped.
Only streams that have made a tool call are judged (the seed nudges only
when tools are available).

Cost per event O(length of its text); memory O(max_text_chars).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import Detector, StreamContext
from .detection import Detection
from .params import action_param, param
from .tool_keys import tools_detection
from .tool_messages import NOTICES

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_INDENTED = re.compile(r"^(?: {4}|\t).*$", re.M)
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.M)
_INLINE = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』")

# Conversational phrases (seed 001's exclusions), and offers that wait for the
# user's answer ("I'll update the docs if you want"): no tool is due now.
_EXCLUSIONS = re.compile(
    r"let me (?:explain|know|think|summari[sz]e|clarify|describe|help|understand|break|outline|walk you"
    r"|provide|suggest|elaborate|start by)"
    r"|if you(?:'d)? (?:want|like|prefer)|would you like|do you want|want me to|shall i|should i"
    r"|让我(?:解释|想|总结|说明|澄清|理解|帮|概括|知道)|我来(?:解释|总结|说明)|如果你?需要|需要我|要不要|是否需要"
)
_EN_INTENT = re.compile(
    r"\b(?:let me|let's|i'll|i will|i'm going to|i am going to)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:search|look up|look at|look into|check|fetch|find|read|open|list|grep|run|execute|query|retrieve"
    r"|write|create|edit|update|delete|remove|call|inspect|view|browse|download|install|load|scan|explore)\b"
)
_ZH_INTENT = re.compile(
    r"(?:让我|我来|我先|我将|我会|我去|我现在|现在我|接下来我|下面我|我马上)们?.{0,4}?"
    r"(?:查|搜|读|看|打开|运行|执行|检查|获取|列出|写|修改|编辑|创建|删除|更新|调用|浏览|下载|安装|加载|扫描)"
)


def prose(text: str) -> str:
    """`text` without code blocks, indented code, code spans, block quotes and quoted strings."""
    text = _FENCE.sub("", text)
    text = _INDENTED.sub("", text)
    text = _QUOTE_LINE.sub("", text)
    return _INLINE.sub("", text)


def tool_intent_phrase(text: str) -> str | None:
    """The phrase by which this reply announces a tool action, or None.

    >>> tool_intent_phrase("OK. Let me search the codebase for that.")
    'let me search'
    >>> tool_intent_phrase("Let me explain: I'll read the file first.") is None
    True
    >>> tool_intent_phrase("Run `let me check` in the shell.") is None
    True
    >>> tool_intent_phrase("我来查一下日志。")
    '我来查'
    """
    lower = prose(text).lower()
    if _EXCLUSIONS.search(lower):
        return None
    match = _EN_INTENT.search(lower) or _ZH_INTENT.search(lower)
    return match.group(0) if match else None


@dataclass(frozen=True)
class ToolIntentParams:
    max_nudges: int = param(2, low=1, high=10, step=1, doc="nudges in a row before giving up")
    max_text_chars: int = param(2000, low=200, high=20000, step=200, doc="longer replies are not judged")
    require_prior_tool_call: bool = param(True, doc="judge only streams that have called a tool")
    action: str = action_param("nudge")


class ToolIntent(Detector):
    name = "tool_intent"
    Params = ToolIntentParams
    builtin = {"default": {}}
    consumes = frozenset({"content", "tool_call", "finish", "turn", "user"})
    reads_text_whole = True  # the turn's text as a whole, judged when it ends

    def __init__(self, params: ToolIntentParams | None = None):
        super().__init__(params)
        self.nudges = 0
        self._new_turn()

    def _new_turn(self) -> None:
        self.parts: list[str] = []
        self.chars = 0
        self.turn_calls = 0
        self.open = False  # a turn with content not judged yet

    def feed(self, event: dict, ctx: StreamContext) -> list[Detection]:
        kind = event["type"]
        if kind == "content":
            self.open = True
            room = self.params.max_text_chars + 1 - self.chars
            if room > 0:
                self.parts.append(event["text"][:room])
            self.chars += len(event["text"])
        elif kind == "tool_call":
            self.turn_calls += 1
            self.nudges = 0
        elif kind == "finish":
            found = self._judge(event, ctx) if event.get("reason") != "length" else []
            self._new_turn()
            return found
        elif kind in ("turn", "user"):
            found = self._judge(event, ctx)
            self._new_turn()
            return found
        return []

    def _judge(self, event: dict, ctx: StreamContext) -> list[Detection]:
        p = self.params
        if not self.open or self.turn_calls:
            return []
        if p.require_prior_tool_call and not ctx.tool_calls:
            return []
        phrase = None if self.chars > p.max_text_chars else tool_intent_phrase("".join(self.parts))
        if phrase is None:
            self.nudges = 0
            return []
        if self.nudges >= p.max_nudges:
            return []  # gave up: the streak goes on without further nudges
        self.nudges += 1
        detection = tools_detection(
            self.name,
            "tool_intent_without_call",
            event,
            ctx,
            start=ctx.tool_calls,
            end=ctx.tool_calls,
            unit=phrase,
            period=0,
            repeats=self.nudges,
            action=p.action,
            extra={"notice": NOTICES["tool_intent_without_call"]},
        )
        return [detection]
