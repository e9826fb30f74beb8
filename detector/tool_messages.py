"""What the agent-loop detections say: one user-facing message per detection
type (worded after seed 004's `getLoopDetectionMessage`: what the AI was
doing, then what to try), and for the types whose action talks to the model
(nudge, force_text) the notice a consumer injects into the conversation
(seed 001's TOOL_INTENT_NUDGE, TRUNCATED_TOOL_CALL_NOTICE and
DUPLICATE_TOOL_CALL_WARNING, in our words).

Messages are templates over the detection's fields (`unit`, `repeats`,
`period`) and its `extra`; the unit is transcript text, so whoever renders a
message as HTML escapes it.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "consecutive_identical_tool_calls": (
        "Loop detected: The AI was calling the same tool repeatedly ({unit}, {repeats} times in a row). "
        "Try a different approach or provide more context."
    ),
    "tool_call_cycle": (
        "Loop detected: The AI was cycling through the same {period} tool calls ({repeats} rounds). "
        "Try a different approach or provide more context."
    ),
    "tool_polling_cap": (
        "The AI has repeated {unit} {repeats} times in a row while its result kept changing. "
        "Check that what it is waiting for can happen."
    ),
    "repeated_tool_name": (
        "Loop detected: The AI called {unit} {repeats} times for one request. "
        "Try a different approach or provide more context."
    ),
    "repeated_failing_batch": (
        "Loop detected: The AI repeated the same failing tool calls {repeats} times. "
        "It should try a different tool or explain what is blocking it."
    ),
    "truncated_tool_calls": (
        "The AI's reply was cut off while it wrote tool calls ({unit}); the calls were discarded ({repeats} so far)."
    ),
    "tool_intent_without_call": ("The AI said it would use a tool but did not call one (nudge {repeats} in a row)."),
    "duplicate_tool_call": (
        "The AI repeated a tool call it already made ({unit}); the result of call {earlier} can be reused."
    ),
    "repeated_failure": (
        "The AI retried an operation that has already failed {repeats} times ({unit}). "
        "Look for the cause before retrying."
    ),
    "backoff_advised": ("{repeats} tool errors in a row: wait about {delay_s:.1f} s before the next attempt."),
    "consecutive_errors": ("The session is unhealthy: {repeats} tool errors in a row. Consider restarting it."),
    "stream_stalled": ("The stream stalled: no event for {gap_s:.0f} s while the AI was working."),
    "stream_idle": (
        "The stream looks dead: no event for {gap_s:.0f} s while the AI was working. Consider restarting it."
    ),
}

DEFAULT_MESSAGE = "Loop detected: The AI detected a repetitive pattern and stopped."

# What a consumer tells the model when the action is nudge or force_text.
NOTICES: dict[str, str] = {
    "tool_intent_without_call": (
        "You said you would perform an action, but your reply contains no tool call. "
        "Do not describe the action: call the tool now."
    ),
    "truncated_tool_calls": (
        "Your previous reply was cut off while writing tool call arguments, so those calls were discarded. "
        "Try a different approach: summarise or transform the data instead of copying it into a tool call."
    ),
    "repeated_failing_batch": (
        "You have made the same tool calls several times and they all failed. Stop repeating them: "
        "use a different tool, or tell the user what is blocking progress and ask for guidance."
    ),
}


def message_for(kind: str, **fields) -> str:
    """The user-facing message of a detection type, filled from its fields.

    >>> message_for("tool_call_cycle", unit="a → b", repeats=3, period=2)[:60]
    'Loop detected: The AI was cycling through the same 2 tool ca'
    """
    template = MESSAGES.get(kind)
    if template is None:
        return DEFAULT_MESSAGE
    return template.format(**fields)
