// The upload result: each imported session's verdict cell asks the session
// API until the scan of its own profile has stored a verdict, then shows it
// (a loop badge linking to the first detection, or clean). Text from the
// API reaches the page through textContent only.
"use strict";

(function () {
  const cells = [...document.querySelectorAll(".scan-verdict[data-url]")];
  if (!cells.length) return;
  const PERIOD_MS = 1000;
  const MAX_POLLS = 300;

  function badge(cell, verdict) {
    const first = verdict.first_detection;
    const link = document.createElement("a");
    if (first) {
      link.className = "badge badge-loop";
      link.href = `${cell.dataset.sessionUrl}?profile=${encodeURIComponent(verdict.profile)}#detection-${first.id}`;
      link.textContent = `loop · ${first.type || first.detector} · ${first.channel} @${first.start}`;
      link.title = `${verdict.detections} detection(s) under ${verdict.profile}; the first by ${first.detector}`;
    } else {
      link.className = "badge badge-clean";
      link.href = `${cell.dataset.sessionUrl}?profile=${encodeURIComponent(verdict.profile)}`;
      link.textContent = "clean";
    }
    cell.replaceChildren(link);
  }

  async function poll(cell) {
    for (let round = 0; round < MAX_POLLS; round++) {
      const response = await fetch(cell.dataset.url, { headers: { Accept: "application/json" } });
      if (response.ok) {
        const session = await response.json();
        const verdict = session.verdicts.find((v) => v.profile === cell.dataset.profile);
        if (verdict) return badge(cell, verdict);
      }
      await new Promise((resolve) => setTimeout(resolve, PERIOD_MS));
    }
    cell.querySelector(".badge").textContent = "not scanned yet: is a worker running?";
  }

  for (const cell of cells) poll(cell).catch((error) => console.error(error));
})();
