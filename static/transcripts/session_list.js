// The session list: rows whose scan is queued or running (`data-pending`)
// are refreshed from the same page, fetched again, until their verdicts
// exist; the server renders every row, so nothing is drawn twice.
"use strict";

(function () {
  const table = document.getElementById("session-table");
  if (!table) return;
  const PERIOD_MS = 1500;
  const MAX_POLLS = 200;
  let polls = 0;

  async function refresh() {
    const response = await fetch(window.location.href, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const row of table.querySelectorAll("tr[data-pending]")) {
      const again = fresh.querySelector(`#session-table tr[data-session="${row.dataset.session}"]`);
      if (again) row.replaceWith(document.importNode(again, true));
    }
  }

  function tick() {
    if (!table.querySelector("tr[data-pending]") || ++polls > MAX_POLLS) return;
    refresh().catch((error) => console.error(error)).finally(() => setTimeout(tick, PERIOD_MS));
  }
  setTimeout(tick, PERIOD_MS);
})();
