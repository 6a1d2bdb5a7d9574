// The charts of a set of results, drawn with uPlot: the site's compare pages (tables.js) and
// `infermeter bench report`'s self-contained page both call this, so a result is drawn one way.
// `data` is registry.charts.chart_data's: {pareto: {label: [[tok/s per user, tok/s per GPU]]},
// cost: {label: $ per 1M tokens}}.
// Both axes from zero to a little above the largest value: bars keep their true proportions
// and the outermost points are not cut by the plot's edge.
const fromZero = (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1];
// Room for tick labels *and* the axis title, so the two never overlap.
const axis = (label, extra = {}) => ({ label, labelSize: 18, size: 64, gap: 6, ...extra });

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
      width, height: 320, scales: { x: { time: false, range: fromZero }, y: { range: fromZero } },
      axes: [axis("tokens/s per user", { size: 48 }), axis("output tokens/s per GPU")],
      series: [{}, ...labels.map((label, i) => ({ label, stroke: palette[i % palette.length], spanGaps: true, points: { show: true, size: 7 } }))],
    }, [xs, ...series], pareto);
  }
  const cost = container.querySelector('[data-chart="cost"]');
  const names = Object.keys(data.cost);
  if (cost && names.length) {
    new uPlot({
      width, height: 300, scales: { x: { time: false, range: [-0.5, names.length - 0.5] }, y: { range: fromZero } },
      axes: [axis("GPU", { size: 48, rotate: names.length > 4 ? -30 : 0, values: (_u, ticks) => ticks.map((t) => names[t] ?? ""), splits: () => names.map((_n, i) => i) }), axis("$ per 1M tokens")],
      series: [{}, { label: "$ / 1M tokens", fill: "#3f51b588", stroke: "#3f51b5", paths: uPlot.paths.bars({ size: [0.6] }), points: { show: false } }],
    }, [names.map((_n, i) => i), names.map((n) => data.cost[n])], cost);
  }
}
