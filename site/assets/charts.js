// The charts of a set of results, drawn with uPlot: the site's compare pages (tables.js) and
// `infermeter bench report`'s self-contained page both call this, so a result is drawn one way.
// `data` is registry.charts.chart_data's: {pareto: {label: [[tok/s per user, tok/s per GPU]]},
// cost: {label: $ per 1M tokens}}.
export function drawCharts(container, data, uPlot) {
  const width = Math.min(container.clientWidth || 640, 760);
  const palette = ["#3f51b5", "#e91e63", "#009688", "#ff9800", "#795548", "#9c27b0", "#607d8b", "#4caf50"];
  const pareto = container.querySelector('[data-chart="pareto"]');
  const labels = Object.keys(data.pareto);
  if (pareto && labels.length) {
    const xs = [...new Set(labels.flatMap((label) => data.pareto[label].map((point) => point[0])))].sort((a, b) => a - b);
    const series = labels.map((label) => {
      const byX = new Map(data.pareto[label].map((point) => [point[0], point[1]]));
      return xs.map((x) => (byX.has(x) ? byX.get(x) : null));
    });
    new uPlot({
      width, height: 320, scales: { x: { time: false } },
      axes: [{ label: "tokens/s per user" }, { label: "output tokens/s per GPU" }],
      series: [{}, ...labels.map((label, i) => ({ label, stroke: palette[i % palette.length], spanGaps: true, points: { show: true, size: 7 } }))],
    }, [xs, ...series], pareto);
  }
  const cost = container.querySelector('[data-chart="cost"]');
  const names = Object.keys(data.cost);
  if (cost && names.length) {
    new uPlot({
      width, height: 300, scales: { x: { time: false, range: [-0.5, names.length - 0.5] } },
      axes: [{ label: "GPU", values: (_u, ticks) => ticks.map((t) => names[t] ?? ""), splits: () => names.map((_n, i) => i) }, { label: "$ per 1M tokens" }],
      series: [{}, { label: "$ / 1M tokens", fill: "#3f51b588", stroke: "#3f51b5", paths: uPlot.paths.bars({ size: [0.6] }), points: { show: false } }],
    }, [names.map((_n, i) => i), names.map((n) => data.cost[n])], cost);
  }
}
