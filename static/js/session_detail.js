// The session page: draws the timeline (figures built server-side), loads
// items of the conversation and windows of text or tool calls on demand,
// scrolls to and flashes the span a timeline marker or a detection entry
// points at (on opening: the `#detection-N` of the address, else the first
// detection), and posts reviewers' labels. Transcript text reaches the DOM
// through textContent, or as HTML the server rendered with its template
// (escaped there) for loaded conversation items.
"use strict";

(function () {
  const page = document.getElementById("session-page");
  if (!page) return;
  const figures = JSON.parse(document.getElementById("timeline-figures").textContent);
  const targets = JSON.parse(document.getElementById("session-targets").textContent);
  const plot = document.getElementById("timeline-plot");
  const windowUrl = page.dataset.windowUrl;
  const profile = page.dataset.profile;
  const el = window.LoopGuard.el;

  function containers(channel) {
    return [...page.querySelectorAll(`[data-channel="${channel}"]`)];
  }

  // --- rendering loaded windows (mirrors _text_window.html and _tool_row.html)


  function textWindow(data) {
    const win = el("span", "text-window");
    win.dataset.start = data.start;
    win.dataset.end = data.end;
    for (const item of data.items) {
      if (item.marker) {
        const marker = el("span", `marker marker-${item.marker}`);
        marker.dataset.detection = item.detection;
        marker.dataset.at = item.at;
        marker.title = item.label;
        win.append(marker);
      } else {
        const piece = el("span", ["piece", ...item.classes].join(" "), item.text);
        piece.dataset.s = item.start;
        piece.dataset.e = item.end;
        if (item.detections.length) piece.dataset.detections = item.detections.join(" ");
        win.append(piece);
      }
    }
    return [win];
  }

  function toolRows(data) {
    return data.rows.map((row) => {
      const li = el("li", "tool-row");
      if (row.repeat_of !== null) li.classList.add("repeat");
      if (row.ok === false) li.classList.add("failed");
      li.dataset.index = row.index;
      if (row.detections.length) li.dataset.detections = row.detections.join(" ");
      const result = row.ok === null ? "no result" : row.ok ? "ok" : "failed";
      li.append(
        el("span", "tool-index", `#${row.index}`), " ",
        el("span", "tool-name", row.name), " ",
        el("code", "tool-args", row.args), " ",
        el("span", "tool-result", row.output ? `${result}: ${row.output}` : result),
      );
      if (row.repeat_of !== null) {
        li.append(" ", el("span", "badge badge-repeat", `repeat of #${row.repeat_of} · call ${row.occurrence} with these arguments`));
      }
      for (const fired of row.fired) {
        const badge = el("span", "badge badge-fired", `⚑ ${fired.detector} fired`);
        badge.dataset.detection = fired.id;
        li.append(" ", badge);
      }
      return li;
    });
  }

  function gapButton(start, end, unit) {
    const button = el("button", "gap", `… ${start}–${end}: show more ${unit} …`);
    button.type = "button";
    button.dataset.start = start;
    button.dataset.end = end;
    return button;
  }

  // --- loading: a gap [a, b) becomes [a, from) gap, the window, [to, b) gap

  async function loadInto(gap, from) {
    const box = gap.closest("[data-channel]");
    const channel = box.dataset.channel;
    const tools = channel === "tools";
    const start = Number(gap.dataset.start);
    const end = Number(gap.dataset.end);
    from = Math.max(start, Math.min(from, end - 1));
    const to = Math.min(end, from + (tools ? targets.pages.calls : targets.pages.chars));
    const query = new URLSearchParams({ channel, start: from, end: to, profile });
    const response = await fetch(`${windowUrl}?${query}`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`loading ${channel} ${from}–${to}: HTTP ${response.status}`);
    const data = await response.json();
    const unit = tools ? "tool calls" : "characters";
    const wrap = (node) => {
      if (!tools) return node;
      const li = el("li", "tool-gap-row");
      li.append(node);
      return li;
    };
    const nodes = [];
    if (data.start > start) nodes.push(wrap(gapButton(start, data.start, unit)));
    nodes.push(...(tools ? toolRows(data) : textWindow(data)));
    if (data.end < end) nodes.push(wrap(gapButton(data.end, end, unit)));
    (tools ? gap.parentElement : gap).replaceWith(...nodes);
  }

  // --- conversation items: a gap [a, b) of items becomes [a, from) gap, the items, [to, b) gap

  function itemGap(start, end) {
    const li = el("li", "item-gap-row");
    const button = el("button", "item-gap", `… show items ${start}–${end} of the conversation …`);
    button.type = "button";
    button.dataset.start = start;
    button.dataset.end = end;
    li.append(button);
    return li;
  }

  async function loadItems(query) {
    query.set("profile", profile);
    const response = await fetch(`${page.dataset.itemsUrl}?${query}`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`loading the conversation: HTTP ${response.status}`);
    const data = await response.json();
    const gap = [...page.querySelectorAll("button.item-gap")].find(
      (button) => Number(button.dataset.start) <= data.start && data.start < Number(button.dataset.end),
    );
    if (!gap) return;  // shown already
    const start = Number(gap.dataset.start);
    const end = Number(gap.dataset.end);
    const fresh = document.createElement("template");
    fresh.innerHTML = data.html;  // rendered by the page's own template: the transcript text in it is escaped
    const nodes = [];
    if (data.start > start) nodes.push(itemGap(start, data.start));
    nodes.push(...fresh.content.childNodes);
    if (data.end < end) nodes.push(itemGap(data.end, end));
    gap.parentElement.replaceWith(...nodes);
  }

  // The item holding `offset` of the channel is in the page (or the channel has no such item).
  function itemShown(channel, offset) {
    return containers(channel).some((box) => {
      const start = Number(box.dataset.start);
      const end = Number(box.dataset.end);
      return start <= offset && (offset < end || (offset === end && !box.closest("[data-item]").nextElementSibling));
    });
  }

  // Make sure `offset` of the channel is shown, loading its item and a window around it if not.
  async function ensureShown(channel, offset) {
    if (!itemShown(channel, offset) && page.querySelector("button.item-gap")) {
      await loadItems(new URLSearchParams({ channel, offset }));
    }
    for (const box of containers(channel)) {
      for (const gap of box.querySelectorAll("button.gap")) {
        const start = Number(gap.dataset.start);
        const end = Number(gap.dataset.end);
        if (start <= offset && offset < end) {
          const context = channel === "tools" ? targets.context.calls : targets.context.chars;
          await loadInto(gap, offset - context);
          return;
        }
      }
    }
  }

  // --- flashing

  function flash(nodes) {
    for (const old of page.querySelectorAll(".flash")) old.classList.remove("flash");
    if (!nodes.length) return;
    for (const node of nodes) {
      const folded = node.closest("details:not([open])");
      if (folded) folded.open = true;  // collapsed reasoning opens to show it
      void node.offsetWidth; // restart the animation
      node.classList.add("flash");
    }
    nodes[0].scrollIntoView({ block: "center", behavior: "auto" });
  }

  async function focusDetection(id) {
    const target = targets.detections[id];
    const entry = page.querySelector(`.detection-group[data-detections~="${id}"] .detection-link`);
    if (!target) return;
    if (target.channel === "session") {
      flash(entry ? [entry] : []);
      return;
    }
    await ensureShown(target.channel, target.start);
    await ensureShown(target.channel, target.channel === "tools" ? Math.max(target.at - 1, 0) : target.at);
    const inside = `[data-channel="${target.channel}"]`;
    const nodes = [
      ...page.querySelectorAll(`${inside} .marker-onset[data-detection="${id}"]`),
      ...page.querySelectorAll(`${inside} [data-detections~="${id}"]`),
      ...page.querySelectorAll(`${inside} .marker-fired[data-detection="${id}"], ${inside} .badge-fired[data-detection="${id}"]`),
    ];
    flash(nodes);
  }

  async function focusRange(channel, start, end) {
    await ensureShown(channel, start);
    const pieces = [...page.querySelectorAll(`[data-channel="${channel}"] .piece`)].filter(
      (piece) => Number(piece.dataset.s) < Math.max(end, start + 1) && Number(piece.dataset.e) > start,
    );
    flash(pieces);
  }

  async function focusTool(index) {
    await ensureShown("tools", index);
    const row = page.querySelector(`.tool-row[data-index="${index}"]`);
    flash(row ? [row] : []);
  }

  // --- wiring

  // A window that failed to load is said on the page (and in the console).
  const status = document.getElementById("session-status");
  function report(error) {
    status.textContent = String(error.message || error);
    status.hidden = false;
    console.error(error);
  }

  // --- labels: a group's buttons label each of its detections; the session's, the session

  const csrf = () => document.querySelector("input[name=csrfmiddlewaretoken]").value;

  async function postLabel(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
    return answer;
  }

  const LABEL_NAMES = { true_loop: "true loop", false_positive: "false positive", clean: "clean" };

  async function labelGroup(button) {
    const cell = button.closest(".label-controls");
    const status = cell.querySelector(".label-status");
    const note = cell.querySelector("input[name=note]").value;
    const label = button.dataset.label;
    status.textContent = "saving…";
    try {
      for (const id of cell.dataset.detections.split(" ")) {
        await postLabel(page.dataset.detectionLabelsUrl.replace("/0/", `/${id}/`), { label, note });
      }
    } catch (error) {
      status.textContent = String(error.message || error);
      return;
    }
    for (const other of cell.querySelectorAll("button[data-label]")) {
      other.setAttribute("aria-pressed", String(other === button));
    }
    status.textContent = `you labelled it ${LABEL_NAMES[label]}`;
  }

  const clean = document.getElementById("session-clean");
  if (clean) {
    clean.addEventListener("click", () => {
      const status = document.getElementById("session-label-status");
      const note = document.getElementById("session-note").value;
      postLabel(page.dataset.sessionLabelsUrl, { label: "clean", note })
        .then(() => {
          clean.setAttribute("aria-pressed", "true");
          status.textContent = "you labelled it clean";
        })
        .catch((error) => { status.textContent = String(error.message || error); });
    });
  }

  page.addEventListener("click", (event) => {
    const labelButton = event.target.closest(".label-controls button[data-label]");
    if (labelButton) {
      labelGroup(labelButton);
      return;
    }
    const items = event.target.closest("button.item-gap");
    if (items) {
      loadItems(new URLSearchParams({ start: items.dataset.start, end: items.dataset.end })).catch(report);
      return;
    }
    const gap = event.target.closest("button.gap");
    if (gap) {
      loadInto(gap, Number(gap.dataset.start)).catch(report);
      return;
    }
    const link = event.target.closest(".detection-link");
    if (link) focusDetection(link.dataset.detection).catch(report);
  });

  const select = document.getElementById("profile-select");
  if (select) select.addEventListener("change", () => select.form.submit());

  const config = { responsive: true, displaylogo: false };
  let axis = "offset";

  // Zooming asks the server for the zoomed stretch in full detail (the page's
  // figures are downsampled over the whole session); a reset shows those again.
  let zoomDue = null;
  let redrawing = false;
  async function zoomTo(x0, x1) {
    const query = new URLSearchParams({ axis, x0, x1, profile });
    const response = await fetch(`${page.dataset.figureUrl}?${query}`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`loading the timeline ${x0}–${x1}: HTTP ${response.status}`);
    const data = await response.json();
    Object.assign(targets.detections, data.targets);
    await redraw(data.figure);
  }

  async function redraw(figure) {
    redrawing = true;
    try {
      await Plotly.react(plot, figure.data, figure.layout, config);
    } finally {
      redrawing = false;
    }
  }

  function onRelayout(change) {
    if (redrawing) return;
    if (change["xaxis.autorange"]) {
      redraw(figures[axis]).catch(report);
      return;
    }
    const range = change["xaxis.range"] || [change["xaxis.range[0]"], change["xaxis.range[1]"]];
    if (range[0] === undefined || range[1] === undefined) return;
    clearTimeout(zoomDue);
    zoomDue = setTimeout(() => zoomTo(range[0], range[1]).catch(report), 200);
  }

  // The page opens at the detection the address names, else at the first one.
  const named = /^#detection-(\d+)$/.exec(location.hash);
  const opening = named ? named[1] : targets.first;
  if (opening !== null && opening !== undefined) focusDetection(String(opening)).catch(report);

  Plotly.newPlot(plot, figures.offset.data, figures.offset.layout, config).then(() => {
    plot.on("plotly_relayout", onRelayout);
    plot.on("plotly_click", (event) => {
      const data = event.points.length ? event.points[0].customdata : null;
      if (!data) return;
      const [kind, ...rest] = data;
      if (kind === "detection") focusDetection(rest[0]).catch(report);
      else if (kind === "range") focusRange(rest[0], rest[1], rest[2]).catch(report);
      else if (kind === "tool") focusTool(rest[0]).catch(report);
    });
  });

  for (const button of page.querySelectorAll(".axis-toggle button")) {
    button.addEventListener("click", () => {
      const figure = figures[button.dataset.axis];
      if (!figure) return;
      axis = button.dataset.axis;
      redraw(figure).catch(report);
      for (const other of page.querySelectorAll(".axis-toggle button")) {
        other.setAttribute("aria-pressed", String(other === button));
      }
    });
  }
})();
