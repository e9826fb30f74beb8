// The overview's charts: figures from the page's JSON (overview/charts.py);
// a click on a bar or point opens the session list filtered to it (its
// customdata is that URL).
(function () {
  "use strict";
  const source = document.getElementById("overview-plots");
  if (!source || !window.Plotly) return;
  const plots = JSON.parse(source.textContent);
  const config = {displayModeBar: false, responsive: true};
  document.querySelectorAll("[data-plot]").forEach(function (node) {
    const figure = plots[node.dataset.plot];
    if (!figure) return;
    Plotly.newPlot(node, figure.data, figure.layout, config).then(function () {
      node.on("plotly_click", function (event) {
        const url = event.points.length && event.points[0].customdata;
        if (typeof url === "string" && url.startsWith("/")) window.location.assign(url);
      });
      node.classList.add("chart-ready");
    });
  });
})();
