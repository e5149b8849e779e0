// Draws the dashboard's charts. Plain script: no build step; needs plotly.js, loaded once per
// page before it (templates/dashboard/_chart_scripts.html).
//
// A chart is <div class="chart" data-figure-id="ID"> and, beside it, the figure as
// <script type="application/json" id="ID"> written by Django's json_script, which escapes
// the untrusted texts in it (templates/dashboard/_chart.html). Charts are drawn when the
// page loads and again after every htmx swap, so that a filtered panel redraws its own.
(function () {
  "use strict";

  // The one place that configures Plotly. plotly.js 4 offers every chart's data to Plotly's
  // cloud by default (showSendToCloud, plotlyServerURL): quality data stays here, so every
  // way out is off, for these charts and, as the default, for any other plot on the page.
  const CONFIG = {
    responsive: true,
    displaylogo: false,
    showSendToCloud: false,
    showEditInChartStudio: false,
    showLink: false,
    sendData: false,
    plotlyServerURL: "",
  };
  Plotly.setPlotConfig(CONFIG);
  // What each chart element was last drawn from, to draw it again only when that changed.
  const drawnFrom = new WeakMap();

  function draw() {
    document.querySelectorAll(".chart[data-figure-id]").forEach((element) => {
      const source = document.getElementById(element.dataset.figureId);
      if (!source || drawnFrom.get(element) === source.textContent) return;
      drawnFrom.set(element, source.textContent);
      let figure;
      try {
        figure = JSON.parse(source.textContent);
      } catch (_) {
        element.textContent = "This chart could not be read.";
        return;
      }
      Plotly.newPlot(element, figure.data, figure.layout, CONFIG);
    });
  }

  // A chart that htmx takes off the page lets go of its plot and resize listener.
  document.addEventListener("htmx:beforeCleanupElement", (event) => {
    if (event.target.classList && event.target.classList.contains("js-plotly-plot")) {
      Plotly.purge(event.target);
    }
  });
  document.addEventListener("htmx:afterSettle", draw);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
