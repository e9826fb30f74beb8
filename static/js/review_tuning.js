// A tuning job's page: the progress bar follows /ws/tuning/<id> live (as the
// replay job page does); when the job finishes the page reloads to show the result.
(function () {
  "use strict";
  const section = document.getElementById("tuning-job");
  const FINISHED = ["done", "failed", "cancelled"];
  if (!section || FINISHED.includes(section.dataset.state)) return;
  const bar = document.getElementById("tuning-progress");

  function show(progress) {
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done;
    document.getElementById("tuning-done").textContent = progress.done;
    document.getElementById("tuning-total").textContent = progress.total;
    document.getElementById("tuning-state").textContent = progress.state;
    if (FINISHED.includes(progress.state)) location.reload();
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + location.host + section.dataset.wsPath);
    socket.onmessage = (message) => show(JSON.parse(message.data));
    socket.onclose = (event) => {
      // 4401/4404: not logged in or no such job; anything else: reconnect.
      if (event.code !== 4401 && event.code !== 4404) setTimeout(connect, 2000);
    };
  }
  connect();
})();
