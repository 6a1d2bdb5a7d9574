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

// A compare page's Pareto chart holds tens of lines (one per GPU × count front), so colour
// alone cannot tell them apart, and it should not have to (colour-blind readers, print). A line's
// colour is its GPU kind: the fronts of one GPU share a hue and read as one family. Within a kind,
// each count gets its own dash and marker shape, both changing from one count to the next (4
// dashes × 3 shapes: 12 distinct looks per kind). Labels that are not "count × GPU" (a `bench
// report`'s result names) are each a kind of their own. Past the palette's 10 hues a kind reuses
// a hue and takes the looks after those of the kinds before it in that hue.
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const DASHES = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
const SHAPES = ["circle", "square", "triangle"];
const LOOKS = DASHES.length * SHAPES.length;
const LINE_PX = 1.5;
// `8 × b200` as registry.charts.default_label writes it: count, then GPU.
const kindOf = (label) => /^\d+ × (.+)$/.exec(label)?.[1] ?? label;

function lineLooks(labels) {
  const kinds = [...new Set(labels.map(kindOf))];
  const rank = new Map();
  const widest = Math.max(...kinds.map((kind) => labels.filter((l) => kindOf(l) === kind).length));
  return labels.map((label) => {
    const kind = kinds.indexOf(kindOf(label));
    const nth = rank.get(kind) ?? 0;
    rank.set(kind, nth + 1);
    const look = (Math.floor(kind / PALETTE.length) * widest + nth) % LOOKS;
    return { stroke: PALETTE[kind % PALETTE.length], dash: DASHES[look % DASHES.length], shape: SHAPES[look % SHAPES.length] };
  });
}

// A marker of `shape` centred on (x, y) inside the circle of radius r, added to `path` (a Path2D
// or a canvas context): the chart's points and the legend's swatches are drawn by this one function.
function addShape(path, shape, x, y, r) {
  if (shape === "square") {
    const half = r * 0.8;
    path.rect(x - half, y - half, 2 * half, 2 * half);
  } else if (shape === "triangle") {
    path.moveTo(x, y - r);
    path.lineTo(x + r * 0.95, y + r * 0.7);
    path.lineTo(x - r * 0.95, y + r * 0.7);
    path.closePath();
  } else {
    path.moveTo(x + r, y);
    path.arc(x, y, r, 0, 2 * Math.PI);
  }
}

// uPlot's points path (its `points.paths` hook), drawing the series' shape at each of its values.
const shapePoints = (shape) => (u, seriesIdx, first, last) => {
  const { points } = u.series[seriesIdx];
  const r = ((points.size - points.width) / 2) * devicePixelRatio;
  const path = new Path2D();
  for (let i = first; i <= last; i++) {
    const y = u.data[seriesIdx][i];
    if (y != null) addShape(path, shape, u.valToPos(u.data[0][i], "x", true), u.valToPos(y, "y", true), r);
  }
  return { stroke: path, fill: path };
};

const lineSeries = (label, look) => ({
  label, stroke: look.stroke, dash: look.dash, width: LINE_PX, spanGaps: true, shape: look.shape,
  points: { show: true, size: MARKER_PX, width: LINE_PX, paths: shapePoints(look.shape) },
});

// The legend shows each line as drawn (its colour, dash and marker), not a bare colour square.
function drawLegendSwatches(u, looks) {
  const rows = u.root.querySelectorAll(".u-legend .u-series");
  looks.forEach((look, i) => {
    const marker = rows[i]?.querySelector(".u-marker");
    if (!marker) return;
    const [w, h] = [30, 12];
    const canvas = document.createElement("canvas");
    canvas.setAttribute("aria-hidden", "true"); // the label beside it says which line it is
    Object.assign(canvas.style, { width: `${w}px`, height: `${h}px`, display: "block" });
    [canvas.width, canvas.height] = [w * devicePixelRatio, h * devicePixelRatio];
    Object.assign(marker.style, { width: `${w}px`, height: `${h}px` });
    const ctx = canvas.getContext("2d");
    ctx.scale(devicePixelRatio, devicePixelRatio);
    Object.assign(ctx, { strokeStyle: look.stroke, lineWidth: LINE_PX, fillStyle: "#fff" });
    ctx.setLineDash(look.dash);
    ctx.beginPath();
    ctx.moveTo(0, h / 2);
    ctx.lineTo(w, h / 2);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    addShape(ctx, look.shape, w / 2, h / 2, (MARKER_PX - LINE_PX) / 2);
    ctx.fill();
    ctx.stroke();
    marker.replaceChildren(canvas);
  });
}

export function drawCharts(container, data, uPlot) {
  const width = Math.min(container.clientWidth || 640, 760);
  const pareto = container.querySelector('[data-chart="pareto"]');
  // The legend in families: a GPU kind's lines together (they share its colour), its counts by
  // value: 8 × b200 before 12 × b200 (the data's keys are sorted as text).
  const byValue = new Intl.Collator("en", { numeric: true }).compare;
  const labels = Object.keys(data.pareto).sort((a, b) => byValue(kindOf(a), kindOf(b)) || byValue(a, b));
  if (pareto && labels.length) {
    const xs = [...new Set(labels.flatMap((label) => data.pareto[label].map((point) => point[0])))].sort((a, b) => a - b);
    const series = labels.map((label) => {
      const byX = new Map(data.pareto[label].map((point) => [point[0], point[1]]));
      return xs.map((x) => (byX.has(x) ? byX.get(x) : null));
    });
    // Kept on its element (`_uplot`): the browser tests read the drawn scales and axes.
    // Each line has its own look (lineLooks) and the point under the cursor also brings its line
    // and its legend row forward and dims the others.
    const looks = lineLooks(labels);
    pareto._uplot = new uPlot({
      width, height: PARETO.height, padding: [PARETO.top, PARETO.right, 0, 0],
      focus: { alpha: FADED }, cursor: { focus: { prox: MARKER_PX * 2 } },
      scales: {
        x: { time: false, range: pastZero(width - PARETO.leftAxis - TITLE_PX - PARETO.right) },
        y: { range: pastZero(PARETO.height - PARETO.bottomAxis - TITLE_PX - PARETO.top) },
      },
      axes: [axis("tokens/s per user", { size: PARETO.bottomAxis }), axis("output tokens/s per GPU", { size: PARETO.leftAxis })],
      // A legend of the lines only: not live, it has no row for the x series (a live one adds
      // "Value: --" and each line's y at the cursor's x, which most lines do not have).
      legend: { live: false, markers: { width: 0, fill: "transparent" } },
      series: [{}, ...labels.map((label, i) => lineSeries(label, looks[i]))],
    }, [xs, ...series], pareto);
    drawLegendSwatches(pareto._uplot, looks);
  }
  const cost = container.querySelector('[data-chart="cost"]');
  const names = Object.keys(data.cost);
  if (cost && names.length) {
    cost._uplot = new uPlot({
      width, height: 300, scales: { x: { time: false, range: [-0.5, names.length - 0.5] }, y: { range: fromZero } },
      axes: [axis("GPU", { size: nameSize(names.length), rotate: nameAngle(names.length), values: (_u, ticks) => ticks.map((t) => names[t] ?? ""), splits: () => names.map((_n, i) => i) }), axis("$ per 1M tokens")],
      // The live legend's x row names the bar under the cursor as the axis does (uPlot's
      // default reads "Value" and the bar's index).
      series: [{ label: "GPU", value: (_u, i) => (i == null ? "--" : names[i] ?? "") }, { label: "$ / 1M tokens", fill: "#3f51b588", stroke: "#3f51b5", paths: uPlot.paths.bars({ size: [0.6] }), points: { show: false } }],
    }, [names.map((_n, i) => i), names.map((n) => data.cost[n])], cost);
  }
}
