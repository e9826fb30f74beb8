// The review queue: t / f label the detection (with the note, if any) and
// move on to the next unlabelled one; s skips; n writes a note; j / k step
// to the next / previous detection of the queue.
(function () {
  "use strict";
  const item = document.getElementById("review-item");
  if (!item) return;
  const note = document.getElementById("label-note");
  const status = document.getElementById("review-status");
  const token = document.querySelector("input[name=csrfmiddlewaretoken]").value;

  async function label(value) {
    const answer = await fetch(item.dataset.labelUrl, {
      method: "POST",
      headers: {"Content-Type": "application/json", "X-CSRFToken": token},
      body: JSON.stringify({label: value, note: note.value}),
    });
    if (!answer.ok) {
      status.textContent = (await answer.json()).error;
      return;
    }
    status.textContent = "labelled " + value.replace("_", " ");
    location.assign(item.dataset.nextUrl);
  }

  function go(url) {
    if (url) location.assign(url);
  }

  item.querySelectorAll("button[data-label]").forEach((button) => {
    button.addEventListener("click", () => label(button.dataset.label));
  });
  item.querySelector("button[data-go=next]").addEventListener("click", () => go(item.dataset.nextUrl));

  const KEYS = {
    t: () => label("true_loop"),
    f: () => label("false_positive"),
    s: () => go(item.dataset.nextUrl),
    j: () => go(item.dataset.followingUrl),
    k: () => go(item.dataset.previousUrl),
    n: () => note.focus(),
  };
  document.addEventListener("keydown", (event) => {
    const typing = ["TEXTAREA", "INPUT", "SELECT"].includes(event.target.tagName);
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || !KEYS[event.key]) return;
    event.preventDefault();
    KEYS[event.key]();
  });
})();
