// The replay job page: the progress bar follows /ws/replays/<id> live; the
// cancel button posts to the API with the page's CSRF token and goes away
// when the job ends, and the page then reloads to show the job's results.
(function () {
  "use strict";
  const section = document.getElementById("replay-job");
  if (!section) return;
  const FINISHED = ["done", "failed", "cancelled"];
  const bar = document.getElementById("job-progress");
  const stateBadge = document.getElementById("job-state");
  const cancel = document.getElementById("job-cancel");
  const error = document.getElementById("job-error");
  let highest = Number(bar.value);  // messages from several workers may arrive out of order
  const BADGES = {done: "badge-clean", failed: "badge-warn", cancelled: "badge-warn"};

  function showState(state) {
    stateBadge.textContent = state;
    stateBadge.className = "badge " + (BADGES[state] || "badge-live");
    if (!FINISHED.includes(state)) return;
    if (cancel) cancel.remove();
    if (section.dataset.ended !== "true") {
      section.dataset.ended = "true";
      location.reload();  // the results table is the server's
    }
  }

  function show(progress) {
    highest = Math.max(highest, progress.done);
    bar.max = progress.total;
    bar.value = highest;
    document.getElementById("job-done").textContent = highest;
    document.getElementById("job-total").textContent = progress.total;
    document.getElementById("job-failed").textContent = progress.failed;
    showState(progress.state);
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + location.host + section.dataset.wsPath);
    socket.onmessage = (message) => {
      show(JSON.parse(message.data));
      section.dataset.socket = "following";  // the snapshot came: every push from now on reaches the page
    };
    socket.onclose = (event) => {
      section.dataset.socket = "closed";
      // 4401/4404: not logged in or no such job; anything else: reconnect.
      if (event.code !== 4401 && event.code !== 4404 && !FINISHED.includes(stateBadge.textContent)) {
        setTimeout(connect, 2000);
      }
    };
  }

  if (cancel) cancel.addEventListener("click", async () => {
    const token = document.querySelector("input[name=csrfmiddlewaretoken]").value;
    const answer = await fetch(section.dataset.cancelUrl, {method: "POST", headers: {"X-CSRFToken": token}});
    const body = await answer.json();
    if (!answer.ok) {
      error.textContent = body.error;
      error.hidden = false;
      return;
    }
    showState(body.state);
  });

  connect();
})();
