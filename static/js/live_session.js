// The live session page: follows /ws/sessions/<id>. Text appends per
// channel, tool calls list, detections highlight their region, and a banner
// shows the loop and its message the moment it is caught; the session
// page's timeline figure is fetched again as the stream grows (at most every
// TIMELINE_MS, at once for a detection). Transcript text
// and detection messages are untrusted: they only reach the DOM through
// textContent. Reconnects resend the snapshot; events are dropped by `seq`
// and detections by `id` when seen before.
(function () {
  "use strict";
  const page = document.getElementById("live-page");
  if (!page) return;
  const el = window.LoopGuard.el;
  const FINAL = ["closed"];
  const TIMELINE_MS = 2000;
  const stateBadge = document.getElementById("live-state");
  const STATE_BADGES = {live: "badge-live", looping: "badge-loop", stopped: "badge-loop", stalled: "badge-warn"};
  // What the status line says in a state; any other: the page follows the stream.
  const STATE_STATUS = {stopped: "stopped: the producer was told to abort", closed: "session closed"};
  const status = document.getElementById("live-status");
  const count = document.getElementById("live-events");
  const banner = document.getElementById("loop-banner");
  const detectionList = document.getElementById("live-detections");
  const offsets = {reasoning: 0, content: 0};
  let toolIndex = 0;
  let lastSeq = 0;
  let turn = 0;
  const seenDetections = new Set();
  let timelineDue = null;  // a pending redraw
  let timelineBusy = false;
  let timelineAgain = false;  // asked for while a fetch was running

  async function drawTimeline() {
    timelineDue = null;
    if (typeof Plotly === "undefined") return;
    if (timelineBusy) {
      timelineAgain = true;
      return;
    }
    timelineBusy = true;
    try {
      const answer = await fetch(page.dataset.timelineUrl, {credentials: "same-origin"});
      if (answer.ok) {
        const figure = await answer.json();
        Plotly.react("live-timeline", figure.data, figure.layout, {responsive: true, displaylogo: false});
      }
    } finally {
      timelineBusy = false;
      if (timelineAgain) {
        timelineAgain = false;
        drawTimeline();
      }
    }
  }

  function timelineLater(now) {
    if (now) {
      clearTimeout(timelineDue);
      drawTimeline();
    } else if (timelineDue === null) {
      timelineDue = setTimeout(drawTimeline, TIMELINE_MS);
    }
  }


  function channel(name) {
    return page.querySelector(`[data-channel="${name}"]`);
  }

  function appendEvent(event) {
    if (event.type === "reasoning" || event.type === "content") {
      const piece = el("span", "piece", event.text);
      piece.dataset.s = offsets[event.type];
      offsets[event.type] += event.text.length;
      piece.dataset.e = offsets[event.type];
      const box = channel(event.type);
      const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
      box.append(piece);
      if (atBottom) box.scrollTop = box.scrollHeight;
    } else if (event.type === "turn") {
      turn += 1;
      for (const name of ["reasoning", "content"]) channel(name).append(el("span", "turn-mark", `turn ${turn}`));
    } else if (event.type === "tool_call") {
      const row = el("li", "tool-call", `${event.name}(${JSON.stringify(event.args || {})})`);
      row.dataset.index = toolIndex;
      toolIndex += 1;
      channel("tools").append(row);
    } else if (event.type === "tool_result") {
      const last = channel("tools").lastElementChild;
      if (last && event.ok === false) last.classList.add("failed");
    }
  }

  function showEvents(events) {
    for (const event of events) {
      if (event.seq <= lastSeq) continue;
      lastSeq = event.seq;
      appendEvent(event);
    }
    count.textContent = lastSeq;
    timelineLater(false);
  }

  function highlight(detection) {
    if (detection.channel === "tools") {
      for (const row of channel("tools").children) {
        const index = Number(row.dataset.index);
        if (index >= detection.start && index <= detection.end) row.classList.add("loop-region");
      }
    } else if (detection.channel in offsets) {
      for (const piece of channel(detection.channel).querySelectorAll(".piece")) {
        if (Number(piece.dataset.e) > detection.start && Number(piece.dataset.s) < detection.end) {
          piece.classList.add("loop-region");
        }
      }
    }
  }

  function showDetection(detection) {
    if (seenDetections.has(detection.id)) return;
    seenDetections.add(detection.id);
    highlight(detection);
    const item = el("li", `action-${detection.action}`);
    item.append(
      el("strong", "", `${detection.action}: ${detection.type}`),
      ` (${detection.detector}, ${detection.channel} ${detection.start}–${detection.end}, event ${detection.event_seq}) `,
      el("span", "detection-message", detection.message),
    );
    detectionList.append(item);
    banner.className = `loop-banner action-${detection.action}`;
    document.getElementById("loop-banner-title").textContent =
      detection.action === "stop" ? "Loop detected — stopped: " : `Loop detected (${detection.action}): `;
    document.getElementById("loop-banner-message").textContent = detection.message;
    banner.hidden = false;
    timelineLater(true);
  }

  function showState(state) {
    stateBadge.textContent = state;
    stateBadge.className = `badge ${STATE_BADGES[state] || "badge-muted"}`;
    status.textContent = STATE_STATUS[state] || "following live";
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + location.host + page.dataset.wsPath);
    socket.onopen = () => { status.textContent = "following live"; };
    socket.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (data.events) showEvents(data.events);
      if (data.detection) showDetection(data.detection);
      if (data.state) showState(data.state);
    };
    socket.onclose = (event) => {
      // 4401/4403/4404: not logged in, not allowed, no such session.
      if ([4401, 4403, 4404].includes(event.code)) {
        status.textContent = `disconnected (${event.code})`;
      } else if (!FINAL.includes(stateBadge.textContent)) {
        status.textContent = "reconnecting…";
        setTimeout(connect, 2000);
      } else {
        status.textContent = "session closed";
      }
    };
  }

  connect();
})();
