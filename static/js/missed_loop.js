// Marking a missed loop by selecting its text. A selection within elements
// of one `data-channel` becomes [start, end) offsets of that channel:
// each end of the selection counts from the nearest element carrying its
// channel offset (`data-offset`, or the session page's `data-s`), in code
// points as the server counts Python string positions. On the `tools`
// channel the selected rows' `data-index` give the calls [first, last + 1).
// The button of #missed-loop then posts the span to its `data-labels-url`.
(function () {
  "use strict";
  const box = document.getElementById("missed-loop");
  if (!box) return;
  const button = box.querySelector("button");
  const status = box.querySelector("[role=status]");
  let span = null;

  function element(node) {
    return node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
  }

  function offsetOf(node, offset) {
    const base = element(node).closest("[data-offset], [data-s]");
    if (!base) return null;
    const before = document.createRange();
    before.setStart(base, 0);
    before.setEnd(node, offset);
    const start = Number(base.dataset.offset !== undefined ? base.dataset.offset : base.dataset.s);
    return start + Array.from(before.toString()).length;
  }

  function callIndex(node) {
    const row = element(node).closest("[data-index]");
    return row ? Number(row.dataset.index) : null;
  }

  function bounds(channel, range) {
    if (channel.dataset.channel === "tools") {
      const first = callIndex(range.startContainer);
      const last = callIndex(range.endContainer);
      return [first, last === null ? null : last + 1];
    }
    return [offsetOf(range.startContainer, range.startOffset), offsetOf(range.endContainer, range.endOffset)];
  }

  function selectedSpan() {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return null;
    const range = selection.getRangeAt(0);
    // Both ends on one channel: in one element, or in two items of the
    // conversation (each carries absolute offsets of its channel).
    const channel = element(range.startContainer).closest("[data-channel]");
    const other = element(range.endContainer).closest("[data-channel]");
    if (!channel || !other || channel.dataset.channel !== other.dataset.channel) return null;
    const [start, end] = bounds(channel, range);
    if (start === null || end === null || end <= start) return null;
    return {channel: channel.dataset.channel, start: start, end: end};
  }

  document.addEventListener("selectionchange", () => {
    span = selectedSpan();
    button.disabled = span === null;
    button.textContent = span ? `Mark ${span.channel} ${span.start}–${span.end} as a missed loop` : "Select the loop's text to mark a missed loop";
  });

  button.addEventListener("click", async () => {
    if (!span) return;
    const token = document.querySelector("input[name=csrfmiddlewaretoken]").value;
    const answer = await fetch(box.dataset.labelsUrl, {
      method: "POST",
      headers: {"Content-Type": "application/json", "X-CSRFToken": token},
      body: JSON.stringify({label: "missed_loop", channel: span.channel, start: span.start, end: span.end}),
    });
    const body = await answer.json();
    status.textContent = answer.ok ? `missed loop stored: ${body.channel} ${body.start}–${body.end}` : body.error;
  });
})();
