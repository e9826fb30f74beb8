// The live dashboard: polls GET /api/live/sessions and redraws the table.
// Titles, models and messages are untrusted: textContent only.
(function () {
  "use strict";
  const table = document.getElementById("live-dashboard");
  if (!table) return;
  const POLL_MS = 3000;
  const STATE_BADGES = {live: "badge-live", looping: "badge-loop", stopped: "badge-loop", stalled: "badge-warn"};
  const body = table.querySelector("tbody");
  const empty = document.getElementById("live-dashboard-empty");

  function cell(text, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.textContent = text;
    return td;
  }

  function row(session) {
    const tr = document.createElement("tr");
    tr.dataset.session = session.id;
    const link = document.createElement("a");
    link.href = table.dataset.pageBase + session.id;
    link.textContent = session.title;
    const title = document.createElement("td");
    title.append(link);
    const state = document.createElement("td");
    const badge = document.createElement("span");
    badge.className = `badge ${STATE_BADGES[session.state] || "badge-muted"}`;
    badge.textContent = session.state;
    state.append(badge);
    const first = session.first_detection;
    tr.append(
      title,
      cell(session.model),
      state,
      cell(String(session.events), "num"),
      cell(session.last_event ? window.LoopGuard.formatDateTime(session.last_event) : "—"),
      cell(first ? `${first.action}: ${first.type} — ${first.message}` : "—"),
    );
    return tr;
  }

  async function refresh() {
    try {
      const answer = await fetch(table.dataset.apiUrl, {credentials: "same-origin"});
      if (answer.ok) {
        const data = await answer.json();
        body.replaceChildren(...data.results.map(row));
        empty.hidden = data.results.length > 0;
      }
    } finally {
      setTimeout(refresh, POLL_MS);
    }
  }

  refresh();
})();
