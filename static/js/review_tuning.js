// A tuning job's page: polls the job until it finishes, moving the progress
// bar, then reloads to show the result.
(function () {
  "use strict";
  const section = document.getElementById("tuning-job");
  if (!section || ["done", "failed"].includes(section.dataset.state)) return;
  const bar = document.getElementById("tuning-progress");

  async function poll() {
    const answer = await fetch(section.dataset.pollUrl, {headers: {Accept: "application/json"}});
    const job = await answer.json();
    bar.max = Math.max(job.total, 1);
    bar.value = job.done;
    document.getElementById("tuning-done").textContent = job.done;
    document.getElementById("tuning-total").textContent = job.total;
    document.getElementById("tuning-state").textContent = job.state;
    if (job.state === "done" || job.state === "failed") location.reload();
    else setTimeout(poll, 1000);
  }
  poll();
})();
