// Draws every <canvas data-chart="ID"> with Chart.js (vendor/chartjs), from the JSON config the
// page put in <script id="ID" type="application/json"> ({type, labels, datasets}: data only).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
    var config = JSON.parse(document.getElementById(canvas.dataset.chart).textContent);
    canvas.chart = new Chart(canvas, {
      type: config.type,
      data: {labels: config.labels, datasets: config.datasets},
      options: {responsive: true, maintainAspectRatio: false, animation: false, spanGaps: true,
                interaction: {mode: "index", intersect: false}}
    });
  });
});
