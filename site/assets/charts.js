// The charts of a set of results, drawn with uPlot: the site's compare pages (tables.js) and
// `infermeter bench report`'s self-contained page both call this, so a result is drawn one way.
// `data` is registry.charts.chart_data's: {pareto: {label: [[tok/s per user, tok/s per GPU,
// on the front]]}, cost: {label: $ per 1M tokens}}; a label's points are already the ones its
// line joins (a compare page's GPU × count front, a report's whole sweep).
// Both axes from zero to a little above the largest value: bars keep their true proportions
// and the outermost points are not cut by the plot's edge.
const fromZero = (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1];
// The speed chart's axes also start at their 0 tick, but its plot reaches one marker (and a
// little) past zero: a point near zero, such as a run on many GPUs at low concurrency, is then
// drawn whole inside the plot rather than cut by its edge. `plotPx` is the plot's length along
// the axis, from the chart's own sizes: uPlot sets the scales before it lays the plot out.
const MARKER_PX = 7;
const FADED = 0.25;
const TITLE_PX = 18;
const PARETO = { height: 320, top: 16, right: 32, bottomAxis: 48, leftAxis: 64 };
const pastZero = (plotPx) => (u, min, max) => {
  const [, top] = fromZero(u, min, max);
  const room = MARKER_PX / 2 + 2;
  return [(-top * room) / (plotPx - room), top];
};
// Room for tick labels *and* the axis title, so the two never overlap.
const axis = (label, extra = {}) => ({ label, labelSize: TITLE_PX, size: 64, gap: 6, ...extra });

// The GPU names under the bars: level while each fits its slot, else slanted just enough that
// neighbours stay apart (the distance between parallel slanted labels is slot × sin(angle)),
// with the axis as tall as the slanted names reach, so its title stays clear of them.
const measure = document.createElement("canvas").getContext("2d");
const widest = (u, i, values) => {
  const font = u.axes[i].font;
  measure.font = font[0].replace(/[0-9.]+px/, `${font[2]}px`);
  return Math.max(0, ...(values || []).map((v) => measure.measureText(String(v ?? "")).width));
};
const slot = (u, count) => u.bbox.width / devicePixelRatio / Math.max(1, count) || 40;
const nameAngle = (count) => (u, values, i) => {
  const height = u.axes[i].font[2];
  if (widest(u, i, values) + 4 <= slot(u, count)) return 0;
  const fit = [30, 45, 60, 90].find((a) => slot(u, count) * Math.sin((a * Math.PI) / 180) >= height + 2);
  return -(fit ?? 90);
};
const nameSize = (count) => (u, values, i) => {
  const a = u.axes[i];
  const angle = (Math.abs(nameAngle(count)(u, values, i)) * Math.PI) / 180;
  const reach = angle ? widest(u, i, values) * Math.sin(angle) + a.font[2] * Math.cos(angle) : a.font[2];
  return Math.ceil(a.ticks.size + a.gap + reach + 2);
};

export function drawCharts(container, data, uPlot) {
  const width = Math.min(container.clientWidth || 640, 760);
  const palette = ["#3f51b5", "#e91e63", "#009688", "#ff9800", "#795548", "#9c27b0", "#607d8b", "#4caf50"];
  const pareto = container.querySelector('[data-chart="pareto"]');
  // In the legend, numbers by value: 8 × b200 before 12 × b200 (the data's keys are sorted as text).
  const labels = Object.keys(data.pareto).sort(new Intl.Collator("en", { numeric: true }).compare);
  if (pareto && labels.length) {
    const xs = [...new Set(labels.flatMap((label) => data.pareto[label].map((point) => point[0])))].sort((a, b) => a - b);
    const series = labels.map((label) => {
      const byX = new Map(data.pareto[label].map((point) => [point[0], point[1]]));
      return xs.map((x) => (byX.has(x) ? byX.get(x) : null));
    });
    // Kept on its element (`_uplot`): the browser tests read the drawn scales and axes.
    // More lines than colours share a colour: the point under the cursor brings its line and its
    // legend row forward and dims the others, so a reader can tell which line it is.
    pareto._uplot = new uPlot({
      width, height: PARETO.height, padding: [PARETO.top, PARETO.right, 0, 0],
      focus: { alpha: FADED }, cursor: { focus: { prox: MARKER_PX * 2 } },
      scales: {
        x: { time: false, range: pastZero(width - PARETO.leftAxis - TITLE_PX - PARETO.right) },
        y: { range: pastZero(PARETO.height - PARETO.bottomAxis - TITLE_PX - PARETO.top) },
      },
      axes: [axis("tokens/s per user", { size: PARETO.bottomAxis }), axis("output tokens/s per GPU", { size: PARETO.leftAxis })],
      series: [{}, ...labels.map((label, i) => ({ label, stroke: palette[i % palette.length], spanGaps: true, points: { show: true, size: MARKER_PX } }))],
    }, [xs, ...series], pareto);
  }
  const cost = container.querySelector('[data-chart="cost"]');
  const names = Object.keys(data.cost);
  if (cost && names.length) {
    cost._uplot = new uPlot({
      width, height: 300, scales: { x: { time: false, range: [-0.5, names.length - 0.5] }, y: { range: fromZero } },
      axes: [axis("GPU", { size: nameSize(names.length), rotate: nameAngle(names.length), values: (_u, ticks) => ticks.map((t) => names[t] ?? ""), splits: () => names.map((_n, i) => i) }), axis("$ per 1M tokens")],
      series: [{}, { label: "$ / 1M tokens", fill: "#3f51b588", stroke: "#3f51b5", paths: uPlot.paths.bars({ size: [0.6] }), points: { show: false } }],
    }, [names.map((_n, i) => i), names.map((n) => data.cost[n])], cost);
  }
}
